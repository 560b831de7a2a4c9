"""Whether what a skill says exists: ``problems(text)`` lists each mention of a tool, argument, command,
operation, setting or name that the code does not have (tests/skills/vocabulary.py reads what it has).

What is read as a mention:
- anywhere but in Python blocks (they run): a snake_case identifier (``remember_fact``, ``merge_by``,
  ``pending_review``) and an ``ENGRAM_*`` variable;
- in a code span of the prose: ``engram …`` (a command path, then its options), ``$operator`` (the
  where-language's), ``POST /v1/…`` (a route), ``engramdb.x.y`` (importable), a camelCase name (a
  wire field, or a property the skill's examples use), a PascalCase name (a class of EngramDB's
  public modules), a lowercase identifier (after a tool in the same sentence, an argument of a tool
  must be one of that tool's);
- in a shell block: every ``engram …`` command; in an MCP call block: the tool, its arguments, and a
  ``where`` (parsed by the where-language's own parser).
"""

from __future__ import annotations

import ast
import re
import shlex
from typing import Any

from engramdb.contract.format import FormattableMemory, format_context
from engramdb.core.knowledge import where as where_language
from engramdb.errors import EngramError
from engramdb.sdk import host
from engramdb.storage.knowledge import port as knowledge_port
from tests.docs.blocks import Block, read
from tests.skills import vocabulary as known
from tests.skills.pages import PLACEHOLDER, mcp_call

SPAN = re.compile(r"`([^`\n]+)`")
SNAKE = re.compile(r"(?<![\w$.-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w-])")
VARIABLE = re.compile(r"\bENGRAM_[A-Z0-9_]+\b")
IDENTIFIER = re.compile(r"[a-z][a-z0-9_]*")
CALL = re.compile(r"([A-Za-z_]\w*)\((.*)\)")
PASCAL = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")
CAMEL = re.compile(r"[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+")
DOTTED = re.compile(r"engramdb(?:\.[a-z_]+)*")
ROUTE = re.compile(r"(?:GET|POST|PUT|PATCH|DELETE) /\S+")
OPERATOR = re.compile(r"\$[A-Za-z]+")
SENTENCE = re.compile(r"(?<=[.;!?])\s+")
ENGRAM = re.compile(r"(?<![\w./-])engram(?![\w.-])")
SHELL_BREAK = re.compile(r"[|;&)]|\$\(")


def problems(text: str) -> list[str]:
    """Every mention in the skill ``text`` of something that does not exist, as a readable line."""
    page = read("skill.md", text)
    examples = _example_words(page.blocks) | _defined_in_python(page.blocks)
    outside_python = _without_python(text, page.blocks)
    unknown = [w for w in _unknown_snake(outside_python) if w not in examples]
    found = [f"`{w}` is no tool, argument, operation, SDK name or value" for w in unknown]
    found += [f"`{v}` is no setting or variable EngramDB reads" for v in _unknown_variables(outside_python)]
    for paragraph in _paragraphs(text, page.blocks):
        for sentence in SENTENCE.split(paragraph):
            said = _sentence_problems(sentence, examples)
            found += [p for p in said if p.split("`")[1] not in unknown or "argument of" in p]  # once a name
    for block in page.blocks:
        found += _block_problems(block)
    return found


def _unknown_snake(text: str) -> list[str]:
    vocabulary = _snake_vocabulary()
    return sorted({w for w in SNAKE.findall(PLACEHOLDER.sub("", text)) if w not in vocabulary})


def _unknown_variables(text: str) -> list[str]:
    return sorted(set(VARIABLE.findall(text)) - known.variables())


def _snake_vocabulary() -> frozenset[str]:
    args = {a for names in known.tools().values() for a in names}
    return frozenset(
        {*known.tools(), *args, *known.operations(), *known.sdk_names(), *known.values(), *known.wire_fields()}
        | known.hermes_tools()
        | known.class_names()
        | _words_the_code_prints()
    )


def _words_the_code_prints() -> set[str]:
    """Error codes, the recall header's words, and the values host metadata is judged by."""
    codes = {c.code for c in _subclasses(EngramError)}
    sample = FormattableMemory(label="EPISODE", text="x", score=1.0, trust_class="mixed", status="superseded")
    header = set(re.findall(r"[a-z_]+", format_context([sample])))
    literals = {v for value in vars(knowledge_port).values() for v in known.literals(value)}
    json_words = {"true", "false", "null"}
    refused = set(host.REFUSED_SESSION_NAMES) | set(re.findall(r"[a-z]+", host.REFUSED_SESSION_KEY.pattern))
    return codes | header | literals | json_words | set(host.INTERACTIVE_TRIGGERS) | refused


def _subclasses(cls: type[EngramError]) -> list[type[EngramError]]:
    return [cls, *(c for sub in cls.__subclasses__() for c in _subclasses(sub))]


def _sentence_problems(sentence: str, examples: set[str]) -> list[str]:
    found: list[str] = []
    tool: str | None = None
    for span in SPAN.findall(sentence):
        span = span.strip()
        if span == "engram" or span.startswith("engram "):
            found += _command_problems(span)
        elif OPERATOR.fullmatch(span):
            found += [] if known.where_operator(span) else [f"`{span}` is no operator of the where-language"]
        elif ROUTE.fullmatch(span):
            found += [] if span in known.routes() else [f"`{span}` is no route of the server"]
        elif DOTTED.fullmatch(span):
            found += [] if known.importable(span) else [f"`{span}` is no module or name of EngramDB"]
        elif called := CALL.fullmatch(span):
            names = [called.group(1), *re.findall(r"(?:^|,)\s*(\w+)", called.group(2))]
            found += [p for name in names for p in _name_problems(name, None, examples)]
        elif CAMEL.fullmatch(span):
            fields = known.wire_fields() | known.sdk_names() | examples
            found += [] if span in fields else [f"`{span}` is no field of the wire models"]
        elif PASCAL.fullmatch(span) or IDENTIFIER.fullmatch(span):
            if span in known.tools() or span in known.hermes_tools():
                tool = span
            else:
                found += _name_problems(span, tool, examples)
    return found


def _name_problems(name: str, tool: str | None, examples: set[str]) -> list[str]:
    if PASCAL.fullmatch(name) or name[:1].isupper():
        return [] if name in known.class_names() else [f"`{name}` is no class of EngramDB's public modules"]
    return _word_problems(name, tool, examples)


def _word_problems(word: str, tool: str | None, examples: set[str]) -> list[str]:
    arguments = {a for names in known.tools().values() for a in names}
    if tool is not None and word in arguments and word not in known.tools().get(tool, frozenset()):
        return [f"`{word}` is not an argument of `{tool}`"]
    vocabulary = _snake_vocabulary() | known.command_words() | examples
    return [] if word in vocabulary else [f"`{word}` is no tool, argument, command, SDK name or value"]


def _command_problems(command: str) -> list[str]:
    """What is wrong with ``engram …``: a word that names no command, an option the command lacks."""
    try:
        words = shlex.split(command.replace("\\\n", " "))
    except ValueError:
        words = command.split()
    current = known.command_line()
    path = "engram"
    for word in words[1:]:
        if word.startswith("-"):
            option = word.split("=", 1)[0]
            names = {o for p in current.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
            if option not in names:
                return [f"`{path}` has no option {option}"]
        elif hasattr(current, "commands"):
            if word not in current.commands:
                return [f"`{path}` has no command {word!r}"]
            current, path = current.commands[word], f"{path} {word}"
    return []


def _block_problems(block: Block) -> list[str]:
    call = mcp_call(block)
    if call is not None:
        return _call_problems(block, *call)
    if block.language in ("bash", "sh", "shell"):
        code = block.code.replace("\\\n", " ")
        return [p for line in code.splitlines() for command in _commands(line) for p in _command_problems(command)]
    return []


def _commands(line: str) -> list[str]:
    """The ``engram …`` commands of one shell line (up to a pipe, a separator or a closing parenthesis)."""
    line = line.split(" #", 1)[0]
    return [SHELL_BREAK.split(line[m.start() :], maxsplit=1)[0].strip() for m in ENGRAM.finditer(line)]


def _call_problems(block: Block, tool: str, arguments: dict[str, Any]) -> list[str]:
    if tool not in known.tools():
        return [f"{block}: `{tool}` is no MCP tool"]
    found = [f"{block}: `{a}` is not an argument of `{tool}`" for a in sorted(set(arguments) - known.tools()[tool])]
    shows_error = re.match(r"[a-z_]+: ", block.output or "") is not None  # an example of a refusal
    if isinstance(arguments.get("where"), dict) and not shows_error:
        try:
            where_language.parse(arguments["where"])
        except EngramError as error:
            found.append(f"{block}: the where is refused: {error.message}")
    return found


def _example_words(blocks: list[Block]) -> set[str]:
    """The words a skill's own MCP examples use as data: nested keys and string values."""
    words: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            words.update(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            words.add(value)

    for block in blocks:
        call = mcp_call(block)
        if call is not None:
            for item in call[1].values():
                walk(item)
    return words


def _defined_in_python(blocks: list[Block]) -> set[str]:
    """The names a skill's Python examples define (functions, classes, methods): they run, so they exist."""
    trees = [ast.parse(b.code) for b in blocks if b.language == "python"]
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name for tree in trees for node in ast.walk(tree) if isinstance(node, kinds)}


def _without_python(text: str, blocks: list[Block]) -> str:
    lines = text.splitlines()
    for block in blocks:
        if block.language == "python":
            start = block.line  # the opening fence, counted from 1: the code starts on the next line
            for i in range(start, start + len(block.code.splitlines())):
                lines[i] = ""
    return "\n".join(lines)


def _paragraphs(text: str, blocks: list[Block]) -> list[str]:
    """The prose of the skill (front matter included), a paragraph a string, code blocks left out."""
    lines = text.splitlines()
    for block in blocks:
        for i in range(block.line - 1, block.line + len(block.code.splitlines()) + 1):
            lines[i] = ""
    prose = re.sub(r"\n(?=- |\|)", "\n\n", "\n".join(lines))  # a list item, a table row: a paragraph each
    return [" ".join(p.split("\n")) for p in prose.split("\n\n") if p.strip()]
