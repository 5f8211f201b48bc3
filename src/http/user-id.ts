/**
 * Spec §9.4 stage 1: answers carrying a user id carry it under both `uid`
 * and `user_id`; requests accept either (`user_id` wins when both are sent).
 */
export const userIdKeys = (id: bigint) => ({ uid: id, user_id: id });
