/**
 * The fake AWS account every local emulator answers for. s3rver accepts exactly one key
 * pair, `S3RVER`/`S3RVER`; DynamoDB Local and the AWS JSON endpoint accept any, so the
 * whole local cloud uses that one.
 */
export const LOCAL_REGION = 'us-east-1';
export const LOCAL_ACCOUNT_ID = '000000000000';
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;
