/**
 * Whole-word pieces of the generated vocabularies: common English words and the words of the
 * sample decision domains (tickets, moderation, screening). Each becomes one token, so prompts
 * about these topics tokenize to realistic lengths instead of byte by byte.
 */
import { LETTER_INSTRUCTION, LIKELIHOOD_INSTRUCTION } from "../scorer/prompt.ts";
export const BASE_WORDS: readonly string[] = `
the be to of and a in that have it for not on with he as you do at this but his by from they we say
her she or an will my one all would there their what so up out if about who get which go me when make
can like time no just him know take people into year your good some could them see other than then now
look only come its over think also back after use two how our work first well way even new want because
any these give day most us is are was were been has had did does said please help thanks thank hello hi
yes answer question option options evidence criterion choose choice letter item state policy decision
ticket customer user account billing invoice charge charged refund payment card credit price plan
subscription cancel renew upgrade downgrade receipt tax bill money paid pay twice double fee
technical error bug crash crashes broken slow login password reset email address profile settings
app website page server down outage timeout install update version device phone browser api key
access locked unlock verify verification security two factor sign signed in out delete data export
post comment content image video link spam scam abuse harassment hate threat violence adult nudity
allow allowed restrict restricted remove removed review flag flagged report reported safe unsafe
harmful offensive insult rude kill attack buy cheap free click win prize offer discount promo follow
application approve approved refer referred decline declined loan income employment credit score
risk fraud fraudulent identity document documents missing complete incomplete eligible requirement
true false none unknown other out-of-scope scope unclear ambiguous maybe not sure urgent priority
high low medium level score rating positive negative neutral happy angry sad great bad terrible love
hate best worst fix fixed issue issues problem problems working doesn't can't won't isn't
`
  .split(/\s+/)
  .filter((word) => word.length > 0);

/**
 * Words of the scorer's own instructions, case kept, and the JSON keys and chat roles that
 * follow a quote or a special token rather than a space: a real tokenizer covers these in a
 * few tokens, so the generated one must too for prompt lengths to be realistic.
 */
export const PROMPT_WORDS: readonly string[] = [
  ...new Set(
    `${LETTER_INSTRUCTION} ${LIKELIHOOD_INSTRUCTION}`.split(/[^A-Za-z]+/).filter((w) => w.length > 1),
  ),
];

/** Pieces that start without the space marker. */
export const UNSPACED_WORDS: readonly string[] = [
  "evidence",
  "criterion",
  "options",
  "system",
  "user",
  "assistant",
];
