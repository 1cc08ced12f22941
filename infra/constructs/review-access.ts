/**
 * How reviewers reach the review pages when deployed: an Amazon Cognito user pool (admins create
 * the users; `reviewers` and `admins` groups; TOTP MFA required; hosted sign-in pages) and an API
 * Gateway HTTP API over HTTPS. Every data route (the pages, `/api/reviews`) has a Lambda
 * authorizer that verifies the Cognito ID token from the session cookie or a bearer header, so a
 * browser's ordinary page loads and form posts are authenticated (a JWT authorizer reads headers
 * only, which plain page navigation cannot set). The three sign-in routes are the only ones
 * without it: they hold no data and their function has no table or bus access.
 */
import { CfnOutput, Duration, Fn, RemovalPolicy, Stack } from "aws-cdk-lib";
import * as apigwv2 from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from "aws-cdk-lib/aws-apigatewayv2-authorizers";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import * as cognito from "aws-cdk-lib/aws-cognito";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import * as logs from "aws-cdk-lib/aws-logs";
import { NagSuppressions } from "cdk-nag";
import { Construct } from "constructs";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { ADMINS_GROUP, REVIEWERS_GROUP } from "../../shared/domain/review/review.ts";
import { RESERVED_CONCURRENCY, REVIEW } from "../../shared/domain/topology.ts";
import type { functionFactory } from "./pipeline-function.ts";

/** Properties of {@link ReviewAccess}. */
export interface ReviewAccessProps {
  /** The review pages' function (the Hono app) and the review API's function. */
  readonly pageFunction: NodejsFunction;
  readonly apiFunction: NodejsFunction;
  /** The pipeline's function factory, for the authorizer and sign-in functions. */
  readonly fn: ReturnType<typeof functionFactory>;
  /** Prefix of the hosted sign-in domain (globally unique per region). @default derived from the account and stack */
  readonly domainPrefix?: string;
}

/** A hosted sign-in domain prefix unique to the account and the stack. */
function defaultDomainPrefix(stack: Stack): string {
  return Fn.join("-", ["decisions", stack.account, Fn.select(2, Fn.split("/", stack.stackId))]);
}

/** The user pool, the HTTP API and its routes. */
export class ReviewAccess extends Construct {
  public readonly userPool: cognito.UserPool;
  public readonly client: cognito.UserPoolClient;
  public readonly api: apigwv2.HttpApi;
  public readonly authorizerFunction: NodejsFunction;
  public readonly signInFunction: NodejsFunction;

  constructor(scope: Construct, id: string, props: ReviewAccessProps) {
    super(scope, id);
    this.userPool = this.createUserPool();
    const domain = this.userPool.addDomain("SignIn", {
      cognitoDomain: { domainPrefix: props.domainPrefix ?? defaultDomainPrefix(Stack.of(this)) },
    });
    this.api = this.createApi();
    this.client = this.createClient();
    const cognitoEnvironment = {
      [FUNCTION_ENV.USER_POOL_ID]: this.userPool.userPoolId,
      [FUNCTION_ENV.USER_POOL_CLIENT_ID]: this.client.userPoolClientId,
    };
    this.authorizerFunction = props.fn("ReviewAuthorizer", "review-authorizer.ts", {
      memoryMiB: 256,
      timeoutSeconds: 10,
      environment: cognitoEnvironment,
      tableAccess: [],
      reservedConcurrency: RESERVED_CONCURRENCY.reviewAuthorizer,
    });
    this.signInFunction = props.fn("ReviewSignIn", "review-sign-in.ts", {
      memoryMiB: 256,
      timeoutSeconds: 15,
      environment: { ...cognitoEnvironment, [FUNCTION_ENV.COGNITO_DOMAIN]: domain.baseUrl() },
      tableAccess: [],
      reservedConcurrency: RESERVED_CONCURRENCY.reviewSignIn,
    });
    const reviewEnvironment = {
      [FUNCTION_ENV.REVIEW_CLAIM_MS]: String(REVIEW.claimMs),
      [FUNCTION_ENV.REVIEW_CHANGE_WINDOW_MS]: String(REVIEW.changeWindowMs),
    };
    for (const [name, value] of Object.entries(reviewEnvironment)) {
      props.pageFunction.addEnvironment(name, value);
      props.apiFunction.addEnvironment(name, value);
    }
    this.addRoutes(props);
    this.suppressFindings();
    this.addOutputs();
  }

  /** The reviewers' user pool (admins create the users; MFA required) and its two groups. */
  private createUserPool(): cognito.UserPool {
    const userPool = new cognito.UserPool(this, "Reviewers", {
      // Admins add reviewers (docs/deploying.md, "Reviewers sign in"); nobody signs themselves up.
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      standardAttributes: { fullname: { required: false, mutable: true } },
      mfa: cognito.Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      passwordPolicy: {
        minLength: 12,
        requireDigits: true,
        requireLowercase: true,
        requireUppercase: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
      // The reviewers' accounts: deleting the pool takes turning this off first. Protection
      // refuses CloudFormation's delete too, so the policy is Retain: a failed first create rolls
      // back keeping this (userless) pool instead of ending ROLLBACK_FAILED.
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const [name, description] of [
      [REVIEWERS_GROUP, "May claim and label escalated items, and change their own label for a few minutes"],
      [ADMINS_GROUP, "May also change or undo any label and settle disputed audit samples"],
    ] as const)
      new cognito.CfnUserPoolGroup(this, `${name}Group`, {
        userPoolId: userPool.userPoolId,
        groupName: name,
        description,
      });
    return userPool;
  }

  /** The HTTP API with its throttling ceiling and access logs. */
  private createApi(): apigwv2.HttpApi {
    const accessLogs = new logs.LogGroup(this, "ApiAccessLogs", {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const api = new apigwv2.HttpApi(this, "ReviewApi", {
      description: "Review pages and API: every data route behind the Cognito-token authorizer",
    });
    const stage = api.defaultStage!.node.defaultChild as apigwv2.CfnStage;
    // A review team clicks, it does not flood: a ceiling that keeps a runaway script off the table.
    // The sign-in routes (open to anyone) have a ceiling of their own, so a flood of them cannot
    // take the data routes' share (see addRoutes).
    stage.defaultRouteSettings = {
      throttlingRateLimit: REVIEW.apiThrottle.rate,
      throttlingBurstLimit: REVIEW.apiThrottle.burst,
    };
    stage.accessLogSettings = {
      destinationArn: accessLogs.logGroupArn,
      format: JSON.stringify({
        requestId: "$context.requestId",
        ip: "$context.identity.sourceIp",
        method: "$context.httpMethod",
        path: "$context.path",
        status: "$context.status",
        reviewer: "$context.authorizer.sub",
        authorizerError: "$context.authorizer.error",
      }),
    };
    return api;
  }

  /** The review pages' public client (PKCE, no secret), redirected back to the API. */
  private createClient(): cognito.UserPoolClient {
    const callbackUrl = `${this.api.apiEndpoint}/auth/callback`;
    return this.userPool.addClient("ReviewPages", {
      // A public client with PKCE: the sign-in function holds no secret to leak.
      generateSecret: false,
      authFlows: {},
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [cognito.OAuthScope.OPENID, cognito.OAuthScope.EMAIL, cognito.OAuthScope.PROFILE],
        callbackUrls: [callbackUrl],
        logoutUrls: [`${this.api.apiEndpoint}/auth/login`],
      },
      // Short-lived tokens: a reviewer removed or signed out is out within minutes. The refresh
      // token renews them for the session (the sign-in routes keep it in an HttpOnly cookie) and
      // is revoked at sign-out.
      idTokenValidity: Duration.minutes(REVIEW.tokenMinutes),
      accessTokenValidity: Duration.minutes(REVIEW.tokenMinutes),
      refreshTokenValidity: Duration.hours(REVIEW.sessionHours),
      enableTokenRevocation: true,
      preventUserExistenceErrors: true,
    });
  }

  /** The data routes behind the authorizer, and the three sign-in routes without it. */
  private addRoutes(props: ReviewAccessProps): void {
    const authorizer = new HttpLambdaAuthorizer("CognitoSession", this.authorizerFunction, {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      // No identity source: the token may be in the cookie or the Authorization header, and
      // caching stays off so that a signed-out cookie is never honoured from a cache.
      identitySource: [],
      resultsCacheTtl: Duration.seconds(0),
    });
    const pages = new HttpLambdaIntegration("Pages", props.pageFunction);
    for (const path of ["/", "/{proxy+}"])
      this.api.addRoutes({ path, methods: [apigwv2.HttpMethod.ANY], integration: pages, authorizer });
    this.api.addRoutes({
      path: "/api/reviews",
      methods: [apigwv2.HttpMethod.GET, apigwv2.HttpMethod.POST],
      integration: new HttpLambdaIntegration("Api", props.apiFunction),
      authorizer,
    });
    const signIn = new HttpLambdaIntegration("SignIn", this.signInFunction);
    const open: [string, apigwv2.HttpMethod][] = [
      ["/auth/login", apigwv2.HttpMethod.GET],
      ["/auth/callback", apigwv2.HttpMethod.GET],
      ["/auth/logout", apigwv2.HttpMethod.GET],
      ["/auth/refresh", apigwv2.HttpMethod.GET],
      ["/auth/refresh", apigwv2.HttpMethod.POST],
    ];
    const stage = this.api.defaultStage!.node.defaultChild as apigwv2.CfnStage;
    const routeSettings: Record<string, unknown> = {};
    for (const [path, method] of open) {
      // A stage's route settings name routes that must exist first.
      for (const route of this.api.addRoutes({ path, methods: [method], integration: signIn }))
        stage.node.addDependency(route);
      // A JSON map in CloudFormation: its values are written as the template takes them.
      routeSettings[`${method} ${path}`] = {
        ThrottlingRateLimit: REVIEW.authThrottle.rate,
        ThrottlingBurstLimit: REVIEW.authThrottle.burst,
      };
    }
    stage.routeSettings = routeSettings;
  }

  /** The cdk-nag findings this design accepts, each with why. */
  private suppressFindings(): void {
    NagSuppressions.addResourceSuppressions(
      this.userPool,
      ["AwsSolutions-COG3", "AwsSolutions-COG8"].map((rule) => ({
        id: rule,
        reason:
          "Threat protection needs the Plus feature plan, at extra cost per user; MFA is required and only admins create users. Turn it on in the user pool if your team's policy asks for it",
      })),
      true,
    );
    NagSuppressions.addResourceSuppressions(
      this.api,
      [
        {
          id: "AwsSolutions-APIG4",
          reason:
            "Only /auth/login, /auth/callback, /auth/refresh and /auth/logout have no authorizer: they start, renew and finish the Cognito sign-in, hold no data, and their function has no table or bus access",
        },
        {
          id: "AwsSolutions-COG4",
          reason:
            "HTTP APIs take Lambda or JWT authorizers; the Lambda authorizer verifies Cognito user pool ID tokens",
        },
      ],
      true,
    );
  }

  /** The URLs and the user pool, at the stack's top level under plain names. */
  private addOutputs(): void {
    const stack = Stack.of(this);
    new CfnOutput(stack, "ReviewPageUrl", {
      value: `${this.api.apiEndpoint}/`,
      description: "The review pages (sign in first)",
    });
    new CfnOutput(stack, "ReviewSignInUrl", { value: `${this.api.apiEndpoint}/auth/login` });
    new CfnOutput(stack, "ReviewApiUrl", { value: `${this.api.apiEndpoint}/api/reviews` });
    new CfnOutput(stack, "ReviewUserPoolId", { value: this.userPool.userPoolId });
  }
}
