import { UnimplementedError } from "./errors.ts";

export interface CrossSignResult {
  readonly ok: boolean;
  readonly signatureRef: string | null;
}

/** Spec §4.6: the interface is fixed; this version implements none of it. */
export interface CrossSigningService {
  verifyNewDevice(signerDeviceId: string, newDeviceId: string, newDeviceEd25519: string): Promise<CrossSignResult>;
  revokeDevice(deviceId: string): Promise<void>;
  isCrossSigned(userId: bigint, deviceId: string): Promise<boolean>;
}

export const crossSigning: CrossSigningService = {
  verifyNewDevice: async () => {
    throw new UnimplementedError("cross-signing: verifyNewDevice is not implemented in this version");
  },
  revokeDevice: async () => {
    throw new UnimplementedError("cross-signing: revokeDevice is not implemented in this version");
  },
  isCrossSigned: async () => false,
};
