import { Duration, Stack, Validations } from 'aws-cdk-lib';
import {
  AccountRecovery,
  FeaturePlan,
  Mfa,
  StandardThreatProtectionMode,
  UserPool,
  type UserPoolClient,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';

/**
 * Browser sign-in: a Cognito user pool and a public app client. Anyone may sign up and
 * verify an email address; the service decides access (an invite, or FOUNDER_EMAILS) and
 * answers everyone else 403 `not_provisioned`, as the private beta requires. The functions
 * verify the pool's ID tokens themselves, against `issuer` and `audience`.
 */
export class Auth extends Construct {
  readonly userPool: UserPool;
  readonly client: UserPoolClient;
  /** The `iss` of the pool's tokens; AUTH_ISSUER of the functions. */
  readonly issuer: string;
  /** The `aud` of the pool's ID tokens, which is the app client id; AUTH_AUDIENCE of the functions. */
  readonly audience: string;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.userPool = new UserPool(this, 'UserPool', {
      selfSignUpEnabled: true,
      signInAliases: { email: true },
      signInCaseSensitive: false,
      autoVerify: { email: true },
      // The service keys identity on the email address, so a changed address counts only once verified.
      keepOriginal: { email: true },
      standardAttributes: { email: { required: true, mutable: true } },
      passwordPolicy: {
        minLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        passwordHistorySize: 5,
        tempPasswordValidity: Duration.days(7),
      },
      mfa: Mfa.OPTIONAL,
      mfaSecondFactor: { otp: true, sms: false },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      // Plus tier for threat protection: blocks sign-ins with leaked credentials and risky
      // sign-ins, which matters for accounts that manage an organization's provider keys.
      featurePlan: FeaturePlan.PLUS,
      standardThreatProtectionMode: StandardThreatProtectionMode.FULL_FUNCTION,
    });
    Validations.of(this.userPool).acknowledge({
      id: 'AwsSolutions-COG2',
      reason: 'Private beta: TOTP MFA is offered to every user but not forced, so invited users can sign in from the browser before enrolling; threat protection (enforced) covers risky sign-ins meanwhile.',
    });

    this.client = this.userPool.addClient('WebClient', {
      // A browser cannot keep a client secret.
      generateSecret: false,
      authFlows: { userSrp: true },
      // No hosted sign-in domain: the web app signs in with SRP directly.
      disableOAuth: true,
      preventUserExistenceErrors: true,
      idTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
    });

    // Spelled out: the pool's ProviderURL attribute lacks the scheme that `iss` carries.
    const stack = Stack.of(this);
    this.issuer = `https://cognito-idp.${stack.region}.${stack.urlSuffix}/${this.userPool.userPoolId}`;
    this.audience = this.client.userPoolClientId;
  }
}
