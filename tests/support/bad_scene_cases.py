"""Bad scenes derived systematically from shipped ones, each with the outcome the program promises for it.

Every case is a file (or a special path) and an expectation: `bad` (exit 2, a message naming the file and, for a
fault inside the document, the JSON pointer of the mutated value), `valid` (removing an optional key leaves a scene
that runs with the key's default) or `either` (a value the schema accepts, such as a density of 1e308: the program's
own checks decide). The published JSON Schema decides which mutations are invalid, so the table follows the format
as it grows.
"""
import copy
import json
import os
import random
import stat

import jsonschema

BASES = ["drop_small", "beam_snap_small", "cloth_tear_small", "plate_drop_small"]
# A value of each JSON type, to put where another type is expected.
WRONG_TYPES = [("string", "x"), ("array", [1]), ("object", {}), ("null", None), ("bool", True), ("number", 7)]
# Finite extremes and edge values a JSON number can hold; each replaces every numeric leaf of one base scene.
EXTREMES = [("1e308", 1e308), ("-1e308", -1e308), ("denormal", 5e-324), ("zero", 0), ("negative", -1),
            ("huge_integer", 2**70)]
# Texts that are not JSON numbers at all: the parser refuses them.
NOT_NUMBERS = ["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "0x10", "1.", ".5", "+1"]


class Case:
    def __init__(self, name, path, expect, pointer=None, message=None):
        self.name, self.path, self.expect = name, path, expect
        self.pointer = pointer    # the JSON pointer the message must name (bad cases inside the document)
        self.message = message    # other text the message must hold


def escape(key):
    return str(key).replace("~", "~0").replace("/", "~1")


def pointer_of(path):
    return "".join("/" + escape(k) for k in path)


def leaves(doc, path=()):
    """(path, value) of every scalar and every array of scalars, depth first, keys in file order."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from leaves(v, path + (k,))
    elif isinstance(doc, list) and any(isinstance(v, (dict, list)) for v in doc):
        for i, v in enumerate(doc):
            yield from leaves(v, path + (i,))
    else:
        yield path, doc


def keys(doc, path=()):
    """Path of every object member, depth first."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield path + (k,)
            yield from keys(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from keys(v, path + (i,))


def node(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def replaced(doc, path, value):
    out = copy.deepcopy(doc)
    node(out, path[:-1])[path[-1]] = value
    return out


def deleted(doc, path):
    out = copy.deepcopy(doc)
    del node(out, path[:-1])[path[-1]]
    return out


class Generator:
    def __init__(self, source_dir, out_dir):
        self.out = out_dir
        with open(os.path.join(source_dir, "docs/schema/bdem.schema.json")) as f:
            self.schema = jsonschema.Draft7Validator(json.load(f))
        self.bases = {}
        for name in BASES:
            with open(os.path.join(source_dir, "inputs/bdem", name + ".json")) as f:
                self.bases[name] = json.load(f)
        self.cases = []
        self.names = set()
        self.seen = set()

    def write(self, name, text, expect, pointer=None, message=None):
        assert name not in self.names, name
        self.names.add(name)
        path = os.path.join(self.out, name + ".json")
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
        self.cases.append(Case(name, path, expect, pointer, message))

    def document(self, name, doc, pointer, missing=None):
        """A mutated document: bad if the schema refuses it (the message names `pointer`). One it accepts is valid
        when only an optional key went (its default applies); a value the schema accepts is left to the program's
        own checks (`either`: exit 0, or exit 2 naming a JSON pointer, the same for check and run)."""
        if not self.schema.is_valid(doc):
            message = f"missing required key '{missing}'" if missing else None
            self.write(name, json.dumps(doc, indent=1), "bad", pointer, message)
        else:
            self.write(name, json.dumps(doc, indent=1), "valid" if missing else "either")

    def first_time(self, kind, path):
        """Whether `kind` has not yet mutated a key at `path` (array indices aside) in any base scene."""
        generic = (kind,) + tuple("*" if isinstance(k, int) else k for k in path)
        if generic in self.seen:
            return False
        self.seen.add(generic)
        return True

    def deletions(self, base):
        doc = self.bases[base]
        for path in keys(doc):
            if path == ("description",) or not self.first_time("delete", path):
                continue
            self.document(f"{base}.delete{pointer_of(path).replace('/', '.')}", deleted(doc, path),
                          pointer_of(path[:-1]) or "/", missing=path[-1])

    def wrong_types(self, base, rotate):
        doc = self.bases[base]
        for n, (path, value) in enumerate(leaves(doc)):
            if path == ("description",) or not self.first_time("type", path):
                continue
            kinds = [t for t in WRONG_TYPES if type(t[1]) is not type(value) and
                     not (isinstance(value, (int, float)) and t[0] == "number")]
            kind, wrong = kinds[(n + rotate) % len(kinds)]
            self.document(f"{base}.type_{kind}{pointer_of(path).replace('/', '.')}", replaced(doc, path, wrong),
                          pointer_of(path))

    def extremes(self, base, per_number):
        """`per_number` of the extremes in every numeric leaf (rotating, so each extreme meets each kind of key
        across leaves), and one in the last component of every vector."""
        doc = self.bases[base]
        n = 0
        for path, value in leaves(doc):
            numbers = value if isinstance(value, list) else [value]
            if not numbers or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in numbers):
                continue
            for k in range(per_number if value is not numbers else 1):
                label, extreme = EXTREMES[n % len(EXTREMES)]
                n += 1
                vector = numbers[:-1] + [extreme]
                self.document(f"{base}.{label}{pointer_of(path).replace('/', '.')}",
                              replaced(doc, path, extreme if value is not numbers else vector), pointer_of(path))

    def not_numbers(self, base):
        doc = self.bases[base]
        marker = 123456.789
        text = json.dumps(replaced(doc, ("time", "end"), marker), indent=1)
        for i, bad in enumerate(NOT_NUMBERS):
            self.write(f"{base}.text_{i}_{bad.replace('.', 'dot').replace('+', 'plus').replace('-', 'minus')}",
                       text.replace(str(marker), bad), "bad", message="invalid JSON")

    def broken_json(self, base):
        text = json.dumps(self.bases[base], indent=1)
        for fraction in (0.1, 0.25, 0.5, 0.75, 0.99):
            cut = int(len(text) * fraction)
            self.write(f"{base}.truncated_{int(fraction * 100)}", text[:cut], "bad", message="invalid JSON")
        self.write(f"{base}.truncated_last_brace", text.rstrip()[:-1], "bad", message="invalid JSON")
        self.write(f"{base}.trailing_comma", text.rstrip()[:-1].rstrip() + ",\n}", "bad", message="invalid JSON")
        self.write(f"{base}.comment", "// a scene\n" + text, "bad", message="invalid JSON")
        self.write(f"{base}.two_documents", text + text, "bad", message="invalid JSON")
        self.write(f"{base}.single_quotes", text.replace('"method"', "'method'"), "bad", message="invalid JSON")
        self.write(f"{base}.bad_utf8", text.replace('"bdem"', '"bd\xffem"').encode("latin-1"), "bad",
                   message="invalid JSON")
        self.write(f"{base}.nul_byte", text.encode()[:40] + b"\0" + text.encode()[40:], "bad",
                   message="invalid JSON")
        dup = text.replace('"method": "bdem"', '"method": "bdem", "method": "bdem"')
        self.write(f"{base}.duplicate_key", dup, "bad", pointer="/method", message="more than once")
        self.write(f"{base}.unknown_key", text.replace('"method"', '"methd": 1, "method"', 1), "bad",
                   pointer="/methd", message="unknown key")
        self.write(f"{base}.bom", b"\xef\xbb\xbf" + text.encode(), "valid")

    def documents_of_other_kinds(self):
        for name, text in [("empty", ""), ("whitespace", " \n\t\n"), ("null", "null"), ("array", "[]"),
                           ("number", "42"), ("string", '"bdem"'), ("empty_object", "{}"),
                           ("deep_arrays", "[" * 100000 + "]" * 100000),
                           ("deep_description", '{"description": ' + "[" * 100000 + "]" * 100000 + "}"),
                           ("unclosed_deep", "[" * 100000)]:
            pointer = {"null": "/", "array": "/", "number": "/", "string": "/", "empty_object": "/",
                       "deep_arrays": "/0", "unclosed_deep": "/0", "deep_description": "/description"}.get(name)
            message = {"empty": "(it is empty)", "whitespace": "invalid JSON"}.get(name)
            self.write("document_" + name, text, "bad", pointer=pointer, message=message)
        rng = random.Random(63)
        for i in range(4):
            self.write(f"garbage_{i}", bytes(rng.randrange(256) for _ in range(200 + 500 * i)), "bad")
        self.write("garbage_zeros", b"\0" * 4096, "bad")

    def special_files(self):
        """Paths that are no regular file. A FIFO nobody writes must not hang the reader."""
        directory = os.path.join(self.out, "special_directory.json")
        os.mkdir(directory)
        fifo = os.path.join(self.out, "special_fifo.json")
        os.mkfifo(fifo)
        loop = os.path.join(self.out, "special_loop.json")
        os.symlink(loop, loop)
        dangling = os.path.join(self.out, "special_dangling.json")
        os.symlink(os.path.join(self.out, "nowhere.json"), dangling)
        for name, path in [("directory", directory), ("fifo", fifo), ("symlink_loop", loop),
                           ("dangling_symlink", dangling), ("missing", os.path.join(self.out, "missing.json")),
                           ("below_a_file", os.path.join(self.cases[0].path, "x.json")),
                           ("dev_null", "/dev/null"), ("dev_zero", "/dev/zero")]:
            self.names.add("special_" + name)
            self.cases.append(Case("special_" + name, path, "bad"))
        unreadable = os.path.join(self.out, "special_unreadable.json")
        with open(unreadable, "w") as f:
            json.dump(self.bases[BASES[0]], f)
        os.chmod(unreadable, 0)
        if os.access(unreadable, os.R_OK):
            print("bad_scenes: the unreadable-file case is skipped: this user (root) reads any file")
        else:
            self.cases.append(Case("special_unreadable", unreadable, "bad"))
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)

    def generate(self):
        for rotate, base in enumerate(BASES):
            self.deletions(base)
            self.wrong_types(base, rotate)
        self.extremes("drop_small", 3)
        self.not_numbers("drop_small")
        self.broken_json("beam_snap_small")
        self.documents_of_other_kinds()
        self.special_files()
        return self.cases
