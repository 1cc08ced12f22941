/**
 * Which kind a policy's certificate is, in the one phrase every place that names a certificate
 * uses (propose, the report, apply's field line and its "certificate verified" line, `decide
 * status`): a registered plan's sample, or learn-then-test on the labels held. Kept beside the
 * registered plan so that a verified line can never read the same for both kinds.
 */

/** The certificate fields the kind is read from. */
interface KindOf {
  readonly registered?: { readonly sample: string } | undefined;
}

/** "pre-registered sample ID", or "learn-then-test on the labels held, not pre-registered". */
function certificateKind(c: KindOf): string {
  return c.registered
    ? `pre-registered sample ${c.registered.sample}`
    : "learn-then-test on the labels held, not pre-registered";
}

/**
 * The "certificate verified" line: its kind, then what it was recomputed on (`labels` labels in
 * `where`, e.g. "the table" or a file's name).
 */
export function verifiedText(c: KindOf, labels: number, where: string): string {
  return `certificate verified (${certificateKind(c)}): recomputed on its ${labels} labels in ${where}`;
}
