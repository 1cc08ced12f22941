/**
 * Which kind a policy's certificate is, in the one phrase every place that names a certificate
 * uses (propose, the report, apply's field line and its "certificate verified" line, `decide
 * status`): a registered plan's sample, or learn-then-test on the labels held. Kept beside the
 * registered plan so that a verified line can never read the same for both kinds.
 *
 * Only a pre-registered certificate lets a policy that requires one act alone: its level is split
 * across the version's plans, so looking again never spends more than α. Learn-then-test on the
 * labels held tests whatever labels a version has gathered when it is proposed, and proposing again
 * after more labels is another look at the same level (an independent check read 94.5% coverage on
 * that flow, at the nominal edge), so it stays a reading, never a licence.
 */

/** The certificate fields the kind is read from. */
interface KindOf {
  readonly registered?: { readonly sample: string } | undefined;
}

/** The phrase naming a learn-then-test certificate wherever one is printed. */
export const LEARN_THEN_TEST_KIND = "learn-then-test on the labels held, not pre-registered";

/** "pre-registered sample ID", or {@link LEARN_THEN_TEST_KIND}. */
export function certificateKind(c: KindOf): string {
  return c.registered ? `pre-registered sample ${c.registered.sample}` : LEARN_THEN_TEST_KIND;
}

/**
 * The "certificate verified" line: its kind, then what it was recomputed on (`labels` labels in
 * `where`, e.g. "the table" or a file's name).
 */
export function verifiedText(c: KindOf, labels: number, where: string): string {
  return `certificate verified (${certificateKind(c)}): recomputed on its ${labels} labels in ${where}`;
}

/** The least confidence a certificate that lets a policy act alone may claim (the plan's default). */
const REQUIRED_CONFIDENCE = 0.95;

/** The certificate fields the licence is read from. */
interface LicenceOf extends KindOf {
  readonly maxError: number;
  readonly confidence: number;
}

/**
 * Why a policy that requires a certificate may not act alone under `certificate`, or undefined
 * when it may (its numbers and labels are checked elsewhere): it must be pre-registered, claim at
 * most the policy's `maxAutoError` where the policy sets one, and claim it with at least
 * {@link REQUIRED_CONFIDENCE}. The schema keeps `registered`, the method and the label source in
 * agreement, so `registered` decides the kind.
 */
export function requiredCertificateProblem(
  policy: {
    readonly id: string;
    readonly requireCertificate?: boolean | undefined;
    readonly maxAutoError?: number | undefined;
  },
  certificate: LicenceOf | undefined,
): string | undefined {
  if (!policy.requireCertificate || !certificate) return undefined;
  const plan = `write a plan with decide calibrate --policy ${policy.id} --plan --request N`;
  if (!certificate.registered)
    return (
      `certificate not pre-registered (${LEARN_THEN_TEST_KIND}): ${policy.id} requires a certificate and acts ` +
      `alone only under a pre-registered one; ${plan}`
    );
  const pct = (x: number) => `${Number((x * 100).toFixed(2))}%`;
  if (policy.maxAutoError !== undefined && certificate.maxError > policy.maxAutoError)
    return `certificate too loose: it claims ≤ ${pct(certificate.maxError)} wrong, and ${policy.id}'s maxAutoError is ${pct(policy.maxAutoError)}; ${plan} --max-auto-error ${policy.maxAutoError}`;
  if (certificate.confidence < REQUIRED_CONFIDENCE)
    return `certificate too loose: it claims its target with ${pct(certificate.confidence)} confidence, and a policy acts alone only under one of at least ${pct(REQUIRED_CONFIDENCE)}; ${plan} --confidence ${REQUIRED_CONFIDENCE}`;
  return undefined;
}
