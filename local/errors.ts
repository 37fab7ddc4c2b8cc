/**
 * A reason the local cloud cannot start, phrased for one line of output
 * (`error: port 3000 is already in use; set PORT to another`).
 */
export class LocalCloudError extends Error {
  override name = 'LocalCloudError';
}
