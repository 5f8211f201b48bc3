/** Client-side trust errors (spec §7.7). */
export class StateError extends Error {
  override readonly name = "StateError";
}
export class UnimplementedError extends Error {
  override readonly name = "UnimplementedError";
}
export class E2eeSendRefusedException extends Error {
  override readonly name = "E2eeSendRefusedException";
  constructor(readonly peerUid: bigint, readonly peerDeviceId: string) {
    super(`sending to revoked device ${peerDeviceId} of user ${peerUid} is refused`);
  }
}
