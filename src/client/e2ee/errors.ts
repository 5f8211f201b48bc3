/** Client-side trust errors (spec §7.7); the first two are shared with the server's trust-event check. */
export { StateError, UnimplementedError } from "../../model/trust.ts";

export class E2eeSendRefusedException extends Error {
  override readonly name = "E2eeSendRefusedException";
  constructor(readonly peerUid: bigint, readonly peerDeviceId: string) {
    super(`sending to revoked device ${peerDeviceId} of user ${peerUid} is refused`);
  }
}
