import { Duration, Stack, Validations } from 'aws-cdk-lib';
import {
  AccountRecovery,
  FeaturePlan,
  Mfa,
  OAuthScope,
  StandardThreatProtectionMode,
  UserPool,
  type UserPoolClient,
  UserPoolClientIdentityProvider,
  type UserPoolDomain,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';

/** Properties of {@link Auth}. */
export interface AuthProps {
  /** The hosted sign-in's domain prefix: `https://<prefix>.auth.<region>.amazoncognito.com`. */
  readonly domainPrefix: string;
}

/** Where the web console's app client may send the browser. */
export interface WebClientProps {
  /** The page Cognito returns the authorization code to (the console's callback page). */
  readonly callbackUrl: string;
  /** The page Cognito returns to after signing out. */
  readonly signOutUrl: string;
}

/**
 * Browser sign-in: a Cognito user pool, its hosted sign-in pages and the web console's
 * public app client. Anyone may sign up and verify an email address; the service decides
 * access (an invite, or FOUNDER_EMAILS) and answers everyone else 403 `not_provisioned`, as
 * the private beta requires. The functions verify the pool's ID tokens themselves, against
 * `issuer` and the app client id as audience.
 */
export class Auth extends Construct {
  readonly userPool: UserPool;
  /** The hosted sign-in pages' domain (a Cognito prefix domain). */
  readonly domain: UserPoolDomain;
  /** The hosted sign-in's base URL, `https://<prefix>.auth.<region>.amazoncognito.com`. */
  readonly signInUrl: string;
  /** The `iss` of the pool's tokens; AUTH_ISSUER of the functions. */
  readonly issuer: string;

  constructor(scope: Construct, id: string, props: AuthProps) {
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

    this.domain = this.userPool.addDomain('Domain', { cognitoDomain: { domainPrefix: props.domainPrefix } });
    this.signInUrl = this.domain.baseUrl();

    // Spelled out: the pool's ProviderURL attribute lacks the scheme that `iss` carries.
    const stack = Stack.of(this);
    this.issuer = `https://cognito-idp.${stack.region}.${stack.urlSuffix}/${this.userPool.userPoolId}`;
  }

  /**
   * The web console's app client: its id is the `aud` of the ID tokens the functions accept
   * (AUTH_AUDIENCE). Added once the console's address is known, which the client's redirect
   * URLs name.
   */
  addWebClient(props: WebClientProps): UserPoolClient {
    return this.userPool.addClient('WebClient', {
      // A browser cannot keep a client secret; the console protects its codes with PKCE instead.
      generateSecret: false,
      // Only the hosted pages sign in (no SRP or password flows through this client); the
      // console refreshes the tokens they issued.
      authFlows: { userSrp: false },
      oAuth: {
        // The code grant only: the implicit grant would put tokens in the URL.
        flows: { authorizationCodeGrant: true },
        scopes: [OAuthScope.OPENID, OAuthScope.EMAIL, OAuthScope.PROFILE],
        callbackUrls: [props.callbackUrl],
        logoutUrls: [props.signOutUrl],
      },
      supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      idTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
    });
  }
}
