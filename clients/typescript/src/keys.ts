/**
 * Keys as SPEC 1 defines them, checked before any request so a bad key never
 * leaves the process: a logical key is one or more segments of `[a-z0-9-]+`
 * joined by `:`, 1 to 80 characters; an authority key is a logical key or
 * `hsr1:<epoch>:<logical>` with the epoch a lowercase canonical UUID.
 */
import { InvalidInput } from "./errors.js";

/** The longest logical key. */
export const MAX_KEY_LEN = 80;

const AUTHORITY_PREFIX = "hsr1:";
const EPOCH = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SEGMENT = /^[a-z0-9-]+$/;

/** Why s is not a logical key, or undefined when it is one. */
function logicalRule(s: string): string | undefined {
  if (s === "") return "a logical key must not be empty";
  if (s.length > MAX_KEY_LEN) return `a logical key is at most ${MAX_KEY_LEN} characters (got ${s.length})`;
  for (const seg of s.split(":")) {
    if (seg === "") return "a logical key has no empty segment (no leading, trailing or doubled ':')";
    if (!SEGMENT.test(seg)) return "a logical key is segments of lowercase letters, digits and '-' joined by ':'";
  }
  return undefined;
}

/** A key shown in an error: quoted, with anything unprintable escaped. */
function shown(s: string): string {
  const cut = s.length > 100 ? s.slice(0, 100) + "..." : s;
  return JSON.stringify(cut).replace(/[\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

/** Throws InvalidInput naming the rule unless key is an authority key (SPEC 1). */
export function checkKey(key: unknown): string {
  if (typeof key !== "string") throw new InvalidInput(`invalid key: a key is a string (got ${typeof key})`, {}, 3);
  let rule: string | undefined;
  if (key.startsWith(AUTHORITY_PREFIX)) {
    const rest = key.slice(AUTHORITY_PREFIX.length);
    const i = rest.indexOf(":");
    if (i < 0) rule = "an hsr1: key must be hsr1:<epoch-uuid>:<logical-key>";
    else if (!EPOCH.test(rest.slice(0, i))) rule = "the epoch must be a lowercase canonical UUID (8-4-4-4-12 hex digits)";
    else rule = logicalRule(rest.slice(i + 1));
  } else {
    rule = logicalRule(key);
  }
  if (rule !== undefined) throw new InvalidInput(`invalid key ${shown(key)}: ${rule}`, {}, 3);
  return key;
}

/**
 * The epoch-qualified key `hsr1:<epoch>:<destinationKey>`. `destinationKey` is
 * the destination's stable business key (for example `refund:ledger-entry-42`):
 * keep passing that one to the destination as its own idempotency key.
 */
export function authorityKey(epoch: string, destinationKey: string): string {
  if (!epoch || !destinationKey) throw new InvalidInput("authorityKey needs an epoch and a destination key", {}, 3);
  if (!EPOCH.test(epoch)) throw new InvalidInput(`invalid epoch ${shown(epoch)}: the epoch must be a lowercase canonical UUID (8-4-4-4-12 hex digits)`, {}, 3);
  const rule = logicalRule(destinationKey);
  if (rule !== undefined) throw new InvalidInput(`invalid key ${shown(destinationKey)}: ${rule}`, {}, 3);
  return AUTHORITY_PREFIX + epoch + ":" + destinationKey;
}
