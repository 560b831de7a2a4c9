/**
 * Python `re` patterns (str patterns, Unicode-aware) as JavaScript regular expressions, so the
 * capture rules can be copied from the Python SDK verbatim and match the same text: `\w` and `\b`
 * are Unicode word characters and boundaries, `\d` any decimal digit, `.` anything but `\n`, and
 * with `m` the anchors `^` and `$` sit at `\n` only (JavaScript's also take `\r`, U+2028, U+2029);
 * `\Z` is the end of the text. Inline flags are given as `flags` ("m", "s", "i").
 */
const WORD = String.raw`\p{L}\p{N}_`;
const BOUNDARY = String.raw`(?:(?<=[${WORD}])(?![${WORD}])|(?<![${WORD}])(?=[${WORD}]))`;

export function pyRegex(pattern: string, flags = ""): RegExp {
  const multiline = flags.includes("m");
  const dotAll = flags.includes("s");
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === "\\") {
      const next = pattern[++i] ?? "";
      if (next === "w") out += inClass ? WORD : `[${WORD}]`;
      else if (next === "d") out += String.raw`\p{Nd}`;
      else if (next === "b" && !inClass) out += BOUNDARY;
      else if (next === "Z" && !inClass) out += String.raw`(?![\s\S])`;
      else out += `\\${next}`;
    } else if (inClass) {
      if (ch === "]") inClass = false;
      out += ch;
    } else if (ch === "[") {
      inClass = true;
      out += ch;
      if (pattern[i + 1] === "^") out += pattern[++i];
      if (pattern[i + 1] === "]") out += `\\${pattern[++i]}`; // a leading ] is literal in Python
    } else if (ch === ".") out += dotAll ? String.raw`[\s\S]` : String.raw`[^\n]`;
    else if (ch === "^") out += multiline ? String.raw`(?<![^\n])` : String.raw`(?<![\s\S])`;
    else if (ch === "$") out += multiline ? String.raw`(?=\n|(?![\s\S]))` : String.raw`(?=\n?(?![\s\S]))`;
    else out += ch;
  }
  return new RegExp(out, `gu${flags.includes("i") ? "i" : ""}`);
}
