/**
 * Drawing a certification sample (`certification-sample.ts` says what its frame is): a systematic
 * sample along the frame's confidence order. The frame's decisions are sorted by calibrated top
 * probability (ties by a hash of the item), and every k-th is drawn from a random start (k = frame
 * size ÷ N, fractional): each decision has exactly the same chance N ÷ frame size, and every
 * stretch of confidence gets its share of the N, which is stratification by confidence with as
 * many bands as draws (implicit stratification: Cochran, Sampling Techniques, 3rd ed., 1977, §8).
 * The start is a hash of the sample id, so the same sample id draws the same items, and the draw
 * never reads a label. Equal chances keep the certificate's exact binomial bound.
 */
import { createHash } from "node:crypto";
import type { CertificationDraw, CertificationFrame, FrameMember } from "./certification-sample.ts";
import { frameRate } from "./certification-sample.ts";

const hashOf = (text: string) => createHash("sha256").update(text).digest();

/** Draws `n` of `members` (its frame is every member `frameRate` admits) systematically by confidence. */
export function drawCertificationSample<M extends FrameMember>(
  members: readonly M[],
  n: number,
  frame: Omit<CertificationFrame, "edges" | "rates">,
): { readonly frame: CertificationFrame; readonly drawn: readonly { member: M; draw: CertificationDraw }[] } {
  const inFrame = members
    .filter((m) => frameRate({ ...frame, edges: [], rates: [1] }, m) > 0)
    .map((m) => ({ m, tie: hashOf(`${frame.sample}\n${m.itemId}`).toString("hex") }))
    .sort((a, b) => a.m.topProbability - b.m.topProbability || (a.tie < b.tie ? -1 : 1))
    .map((x) => x.m);
  const take = Math.min(n, inFrame.length);
  const rate = inFrame.length ? take / inFrame.length : 0;
  const full: CertificationFrame = { ...frame, edges: [], rates: [rate] };
  if (take === 0) return { frame: full, drawn: [] };
  const step = inFrame.length / take;
  const start = (hashOf(`start\n${frame.sample}`).readUInt32BE(0) / 2 ** 32) * step;
  const drawn = Array.from({ length: take }, (_, i) => inFrame[Math.floor(start + i * step)]!).map(
    (member) => ({ member, draw: { ...full, band: 0, inclusionProbability: rate } }),
  );
  return { frame: full, drawn };
}
