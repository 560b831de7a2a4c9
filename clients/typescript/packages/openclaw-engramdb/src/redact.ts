/**
 * The Python SDK's redaction rules (engramdb/sdk/capture.py), copied verbatim as Python patterns
 * (pyregex.ts reads them as Python does) and applied in the same order: secrets, command output and
 * local paths become `[redacted:<kind>]`.
 */
import { pyRegex } from "./pyregex.ts";

const ROOTS =
  "home|Users|root|etc|var|tmp|opt|usr|srv|mnt|private|Volumes|proc|dev|run|snap|work|" +
  "workspace|app|data|lib|bin|sbin|boot|media|nix|Library|Applications";
const SECRET_VALUE = String.raw`(?=[^\s"']*[0-9_\-!@#$%^&*+/=])[^\s"']{6,}`;
const SHELLISH = new Set(
  ("|console|shell|shell-session|sh|bash|zsh|fish|terminal|output|log|logs|text|txt|stdout|stderr|" +
    "powershell|ps|ps1|cmd|bat").split("|"),
);
const r = String.raw;

// (kind, pattern, replacement with {} for the mark; "" = the mark alone), in the Python SDK's order.
const RULES: Array<[string, RegExp, string]> = [
  ["private_key", pyRegex(r`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?` + r`(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)`, "s"), ""],
  ["command_output", pyRegex(r`Traceback \(most recent call last\):\n(?:[ \t].*\n?)*` + r`(?:[\w.]+(?:Error|Exception|Exit|Interrupt)\b.*)?`), ""],
  ["command_output", pyRegex(r`^[ \t]*(?:\$|%|PS [^\n>]*>|[A-Za-z]:\\[^\n>]*>|` + r`[\w.-]+@[\w.-]+:[^\n$#]*[$#])[ \t]+\S.*(?:\n(?![ \t]*$).*)*`, "m"), ""],
  ["env", pyRegex(r`^[ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]+[ \t]*=[ \t]*\S.*$`, "m"), ""],
  ["url_credentials", pyRegex(r`\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@`), "$1{}@"],
  [
    "api_key",
    pyRegex(
      r`\b(?:sk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_\-]{16,}` +
        r`|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}` +
        r`|glpat-[A-Za-z0-9_\-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}` +
        r`|AIza[0-9A-Za-z_\-]{35}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|hf_[A-Za-z0-9]{30,}` +
        r`|npm_[A-Za-z0-9]{36}|egm\.[a-z0-9-]+\.[A-Za-z0-9_]+\.[A-Za-z0-9_\-]+)`,
    ),
    "",
  ],
  ["token", pyRegex(r`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), ""],
  ["token", pyRegex(r`\b(bearer|basic|token)([ \t]+)[A-Za-z0-9._~+/=\-]{16,}`, "i"), "$1$2{}"],
  [
    "secret",
    pyRegex(
      r`\b([\w.-]*(?:api[_-]?key|secret|token|passw(?:or)?d|passphrase|pwd|credential)s?[\w.-]*)` +
        r`([ \t]*(?::|=|\bis\b|\bwas\b)[ \t]*)("[^"\n]*"|'[^'\n]*'|` + SECRET_VALUE + ")",
      "i",
    ),
    "$1$2{}",
  ],
  ["secret", pyRegex(r`\b(?=[A-Za-z0-9+/_\-]*[0-9])(?=[A-Za-z0-9+/_\-]*[a-z])` + r`(?=[A-Za-z0-9+/_\-]*[A-Z])[A-Za-z0-9+/_\-]{32,}={0,2}`), ""],
  ["path", pyRegex(r`\bfile://[^\s'"<>]+`), ""],
  ["path", pyRegex(r`(?<![\w.:/~-])(?:~|/(?:` + ROOTS + r`))(?:/[^\s'"` + "`" + r`<>|;,)\]]+)+/?`), ""],
  ["path", pyRegex(r`(?<![\w])[A-Za-z]:\\[^\s'"<>|]*|\\\\[^\s\\]+\\[^\s'"<>|]+`), ""],
];
const FENCE = pyRegex(r`^[ \t]*` + "```" + r`[ \t]*([\w+.-]*)[^\n]*\n.*?(?:^[ \t]*` + "```" + r`[ \t]*$|\Z)`, "ms");

/** `text` with secrets, command output and local paths replaced, and the kinds found. */
export function redact(input: string): { text: string; kinds: string[] } {
  const found: string[] = [];
  let text = input.replace(FENCE, (whole, lang: string) => {
    if (!SHELLISH.has(lang.toLowerCase())) return whole;
    found.push("command_output");
    return "[redacted:command_output]";
  });
  for (const [kind, pattern, template] of RULES) {
    const mark = `[redacted:${kind}]`;
    const replacement = template ? template.replace("{}", mark) : mark;
    text = text.replace(pattern, (...args: unknown[]) => {
      found.push(kind);
      const groups = args.slice(1, -2) as Array<string | undefined>;
      return replacement.replace(/\$(\d)/g, (_, n: string) => groups[Number(n) - 1] ?? "");
    });
  }
  return { text, kinds: [...new Set(found)] };
}
