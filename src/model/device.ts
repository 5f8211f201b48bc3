/** One of my devices as `GET /api/v1/device/mine` answers it (docs/accounts.md): server and SDK share this shape. */
export interface DeviceItem {
  readonly device_id: string;
  readonly device_type: string;
  readonly name: string;
  readonly trust_state: string;
  readonly status: number;
  readonly signed_in: boolean;
  readonly online: boolean;
  /** The device making the request. */
  readonly current: boolean;
  readonly created_at: number;
  readonly last_seen_at: number;
}
