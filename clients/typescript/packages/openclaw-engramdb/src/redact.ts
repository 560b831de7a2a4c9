/**
 * The Python SDK's redaction rules (engramdb/sdk/capture.py), in the same order: secrets, command
 * output and local paths become `[redacted:<kind>]`.
 */
const ROOTS =
  "home|Users|root|etc|var|tmp|opt|usr|srv|mnt|private|Volumes|proc|dev|run|snap|work|" +
  "workspace|app|data|lib|bin|sbin|boot|media|nix|Library|Applications";
const SECRET_VALUE = `(?=[^\\s"']*[0-9_\\-!@#$%^&*+/=])[^\\s"']{6,}`;
const SHELLISH = new Set(
  ("|console|shell|shell-session|sh|bash|zsh|fish|terminal|output|log|logs|text|txt|stdout|stderr|" +
    "powershell|ps|ps1|cmd|bat").split("|"),
);

// (kind, pattern, replacement with {} for the mark; "" = the mark alone)
const RULES: Array<[string, RegExp, string]> = [
  ["private_key", /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$(?![\s\S]))/g, ""],
  ["command_output", /Traceback \(most recent call last\):\n(?:[ \t].*\n?)*(?:[\w.]+(?:Error|Exception|Exit|Interrupt)\b.*)?/g, ""],
  ["command_output", /^[ \t]*(?:\$|%|PS [^\n>]*>|[A-Za-z]:\\[^\n>]*>|[\w.-]+@[\w.-]+:[^\n$#]*[$#])[ \t]+\S.*(?:\n(?![ \t]*$).*)*/gm, ""],
  ["env", /^[ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]+[ \t]*=[ \t]*\S.*$/gm, ""],
  ["url_credentials", /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/g, "$1{}@"],
  [
    "api_key",
    new RegExp(
      "\\b(?:sk-(?:proj-|ant-(?:api\\d\\d-)?)?[A-Za-z0-9_\\-]{16,}" +
        "|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}" +
        "|glpat-[A-Za-z0-9_\\-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}" +
        "|AIza[0-9A-Za-z_\\-]{35}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|hf_[A-Za-z0-9]{30,}" +
        "|npm_[A-Za-z0-9]{36}|egm\\.[a-z0-9-]+\\.[A-Za-z0-9_]+\\.[A-Za-z0-9_\\-]+)",
      "g",
    ),
    "",
  ],
  ["token", /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, ""],
  ["token", /\b(bearer|basic|token)([ \t]+)[A-Za-z0-9._~+/=\-]{16,}/gi, "$1$2{}"],
  [
    "secret",
    new RegExp(
      "\\b([\\w.-]*(?:api[_-]?key|secret|token|passw(?:or)?d|passphrase|pwd|credential)s?[\\w.-]*)" +
        `([ \\t]*(?::|=|\\bis\\b|\\bwas\\b)[ \\t]*)("[^"\\n]*"|'[^'\\n]*'|${SECRET_VALUE})`,
      "gi",
    ),
    "$1$2{}",
  ],
  ["secret", /\b(?=[A-Za-z0-9+/_\-]*[0-9])(?=[A-Za-z0-9+/_\-]*[a-z])(?=[A-Za-z0-9+/_\-]*[A-Z])[A-Za-z0-9+/_\-]{32,}={0,2}/g, ""],
  ["path", /\bfile:\/\/[^\s'"<>]+/g, ""],
  ["path", new RegExp(`(?<![\\w.:/~-])(?:~|/(?:${ROOTS}))(?:/[^\\s'"\`<>|;,)\\]]+)+/?`, "g"), ""],
  ["path", /(?<![\w])[A-Za-z]:\\[^\s'"<>|]*|\\\\[^\s\\]+\\[^\s'"<>|]+/g, ""],
];
const FENCE = /^[ \t]*```[ \t]*([\w+.-]*)[^\n]*\n[\s\S]*?(?:^[ \t]*```[ \t]*$|$(?![\s\S]))/gm;

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
