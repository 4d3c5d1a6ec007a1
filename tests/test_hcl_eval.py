"""The HCL evaluator and function library: each supported construct and function, and how
Unknown / Ref values propagate (never a guess)."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.model import Ref, Unknown
from scanner.sources.terraform.hcl.expressions import evaluate, materialize
from scanner.sources.terraform.hcl.parse import parse_expression
from scanner.sources.terraform.hcl.type_constraints import convert, parse_type
from scanner.sources.terraform.hcl.values import EvalError, GroupRefs, TSet, literal_scope

U = Unknown("var.u has no value")
R = Ref("aws_subnet.a")
RA = Ref("aws_vpc.main", "default_route_table_id")
BINDINGS: dict[str, Any] = {
    "u": U,
    "r": R,
    "ra": RA,
    "obj": {"a": 1, "b": {"c": [10, 20]}, "n": None},
    "items": [{"id": "x", "on": True}, {"id": "y", "on": False}],
}


def ev(text: str) -> Any:
    return evaluate(parse_expression(text), literal_scope(dict(BINDINGS)))


def unknown(text: str) -> Unknown:
    v = ev(text)
    assert isinstance(v, Unknown), f"{text} gave {v!r}"
    return v


# -- constructs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("obj.a", 1),
        ("obj.b.c[1]", 20),
        ('obj["b"]["c"][0]', 10),
        ("obj.n", None),
        ("items[*].id", ["x", "y"]),
        ("[for i in items : i.id if i.on]", ["x"]),
        ('[for i, v in ["a", "b"] : "${i}${v}"]', ["0a", "1b"]),
        ("{for i in items : i.id => i.on}", {"x": True, "y": False}),
        ('{for s in ["a", "b", "a"] : s => 1...}', {"a": [1, 1], "b": [1]}),
        ("{for k, v in {b = 2, a = 1} : v => k}", {"1": "a", "2": "b"}),
        ("obj.n == null", True),
        ("obj != null", True),
        ("[1, 2] == [1, 2]", True),
        ('1 == "1"', False),  # different types are never equal
        ('"5" + 1', 6),  # strings convert to numbers in arithmetic
        ("5 / 2", 2.5),
        ("4 / 2", 2),
        ("-7 % 3", -1),
        ("null[*]", []),
        ('"x"[*]', ["x"]),
    ],
)
def test_constructs(text: str, value: Any) -> None:
    assert ev(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "obj.missing",
        "items[5]",
        "obj.n.x",
        "1 / 0",
        '{for s in ["a", "a"] : s => 1}',
        "null == null ? obj.missing : 1",
        '[1]["x"]',
        '"a" + 1',
        'tobool("yes")',
        'tobool("TRUE")',
        "tobool(1)",
        'tonumber("42\\n")',
        'tonumber("1_000")',
        'parseint("0x10", 16)',
        'parseint(" 12", 10)',
        'parseint("1_0", 10)',
    ],
)
def test_errors_terraform_would_report(text: str) -> None:
    with pytest.raises(EvalError):
        ev(text)


# -- unknown propagation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "u",
        "u.x",
        "u[0]",
        "u + 1",
        '"a-${u}"',
        "u ? 1 : 2",
        "u == 1",
        "!u",
        "[for x in u : x]",
        "u[*].id",
        "r + 1",
        '"${r}-x"',
        "r.name",
        "r[0]",
        "ra == null",  # an arbitrary computed attribute might be null
        'format("%s", u)',
        'join(",", ["a", u])',
        "jsonencode({a = r})",
        "merge(u, {a = 1})",
        "length(u)",
        "keys(u)",
        'lookup(u, "a", 1)',
        "contains([u], 1)",
        'coalesce(u, "a")',
        "toset([u])",
        "flatten([[1], u])",
        "cidrsubnet(u, 8, 1)",
        "upper(u)",
        "timestamp()",
        "uuid()",
        'file("x.txt")',
        'templatefile("x.tpl", {})',
        'provider::aws::arn_parse("x")',
        "no_such_function(1)",
    ],
)
def test_unknown_propagates(text: str) -> None:
    unknown(text)


def test_unknown_carries_its_reason() -> None:
    assert unknown("u + 1").reason == "var.u has no value"
    assert "aws_subnet.a" in unknown("r + 1").reason
    assert "not supported" in unknown("no_such_function(1)").reason


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("false && u", False),
        ("u && false", False),
        ("true || u", True),
        ("u || true", True),
        ("u ? 5 : 5", 5),  # both branches agree
        ("r != null", True),  # a resource id is never null once applied
        ("length([u, u])", 2),
        ("concat([u], [1])", [U, 1]),
        ("merge({a = u}, {b = 1})", {"a": U, "b": 1}),
        ('lookup({a = u, b = 2}, "b")', 2),
        ("[u, 1][1]", 1),
        ("{a = u}.a", U),
        ("try(u, 1)", U),  # cannot tell whether u would fail
        ("try(obj.missing, 7)", 7),
        ("can(obj.missing)", False),
        ("can(obj.a)", True),
        ("[r, ra]", [R, RA]),
        ("tolist(r)", R),
        ('concat(r, ["subnet-1"])', [R, "subnet-1"]),
        ("slice(u, 0, 3)", [U, U, U]),  # the length is known even if the elements are not
        ("length(slice(u, 0, 2))", 2),
        ("contains([1, u], 1)", True),
    ],
)
def test_known_despite_unknown_parts(text: str, value: Any) -> None:
    assert ev(text) == value


def test_contains_with_an_unknown_element_is_undecidable() -> None:
    unknown("contains([u, 2], 1)")


# -- functions ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('jsonencode({b = [1, "x"], a = true, c = null})', '{"a":true,"b":[1,"x"],"c":null}'),
        ('jsonencode("<&>")', '"\\u003c\\u0026\\u003e"'),
        ('jsondecode("{\\"a\\": [1, 2.5]}")', {"a": [1, 2.5]}),
        ("merge({a = 1, b = 1}, {b = 2}, null)", {"a": 1, "b": 2}),
        ("concat([1], [2, 3], [])", [1, 2, 3]),
        ('lookup({a = 1}, "b", "dflt")', "dflt"),
        ("element([1, 2, 3], 4)", 2),
        ('length("héllo")', 5),
        ("length({a = 1})", 1),
        (
            'format("%s-%03d-%.2f-%t-%q-%5s|%-3s|", "a", 7, 1.5, true, "q", "r", "l")',
            'a-007-1.50-true-"q"-    r|l  |',
        ),
        ('format("%v %%", [1])', "[1] %"),
        ('formatlist("%s=%s", ["a", "b"], "x")', ["a=x", "b=x"]),
        ("tostring(5)", "5"),
        ("tostring(true)", "true"),
        ("tostring(null)", None),
        ('tonumber("2.5")', 2.5),
        ('tobool("true")', True),
        ('tobool("1")', True),  # terraform 1.11: "1" and "0" are bools
        ('"0" ? 1 : 2', 2),
        ('tonumber("+5")', 5),
        ('parseint("+12", 10)', 12),
        ('parseint("-ff", 16)', -255),
        ('toset(["b", "a", "b"])', ["a", "b"]),
        ('tolist(toset(["b", "a"]))', ["a", "b"]),
        ("tomap({a = 1})", {"a": 1}),
        ("try(obj.missing, obj.a)", 1),
        ('coalesce(null, "", "x")', "x"),
        ("coalescelist([], [1])", [1]),
        ('contains(["a"], "a")', True),
        ("keys({b = 1, a = 2})", ["a", "b"]),
        ("values({b = 1, a = 2})", [2, 1]),
        ("min(3, 1, 2)", 1),
        ("max(3, 1, 2)", 3),
        ("max([4, 9]...)", 9),
        ("flatten([1, [2, [3]], []])", [1, 2, 3]),
        ('compact(["a", "", null, "b"])', ["a", "b"]),
        ("distinct([1, 2, 1])", [1, 2]),
        ("slice([1, 2, 3], 1, 3)", [2, 3]),
        ("reverse([1, 2])", [2, 1]),
        ('zipmap(["a", "b"], [1, 2])', {"a": 1, "b": 2}),
        ("one([])", None),
        ("one([4])", 4),
        ('index(["a", "b"], "b")', 1),
        ("range(3)", [0, 1, 2]),
        ("range(1, 4, 2)", [1, 3]),
        ("chunklist([1, 2, 3], 2)", [[1, 2], [3]]),
        ("setunion([1], [2, 1])", [1, 2]),
        ("setintersection([1, 2], [2, 3])", [2]),
        ("setsubtract([1, 2], [2])", [1]),
        ('setproduct(["a"], [1, 2])', [["a", 1], ["a", 2]]),
        ('sort(["b", "a"])', ["a", "b"]),
        ("sum([1, 2.5])", 3.5),
        ("alltrue([true, true])", True),
        ("anytrue([false, true])", True),
        ('transpose({a = ["x"], b = ["x", "y"]})', {"x": ["a", "b"], "y": ["b"]}),
        ('matchkeys(["i1", "i2"], ["a", "b"], ["b"])', ["i2"]),
        ('join("-", ["a", "b"], ["c"])', "a-b-c"),
        ('split(",", "a,b")', ["a", "b"]),
        ('lower("AB")', "ab"),
        ('upper("ab")', "AB"),
        ('title("hello world")', "Hello World"),
        ('trimspace("  x ")', "x"),
        ('trim("xxaxx", "x")', "a"),
        ('trimprefix("abc", "a")', "bc"),
        ('trimsuffix("abc", "c")', "ab"),
        ('chomp("a\\n\\n")', "a"),
        ('indent(2, "a\\nb")', "a\n  b"),
        ('startswith("abc", "ab")', True),
        ('endswith("abc", "bc")', True),
        ('strcontains("abc", "b")', True),
        ('strrev("abc")', "cba"),
        ('substr("hello", 1, 3)', "ell"),
        ('substr("hello", -3, -1)', "llo"),
        ('replace("a-b-c", "-", "_")', "a_b_c"),
        ('replace("a1b22", "/[0-9]+/", "#")', "a#b#"),
        ('regex("(\\\\d+)-(\\\\d+)", "10-20")', ["10", "20"]),
        ('regex("(?P<a>\\\\w)", "x")', {"a": "x"}),
        ('regexall("\\\\d", "a1b2")', ["1", "2"]),
        ('base64encode("hi")', "aGk="),
        ('base64decode("aGk=")', "hi"),
        ('md5("x")', "9dd4e461268c8034f5c8564e155c67a6"),
        ('sha256("")', "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ('urlencode("a b&c")', "a+b%26c"),
        ('yamldecode("a: [1, 2]")', {"a": [1, 2]}),
        ('csvdecode("a,b\\n1,2\\n")', [{"a": "1", "b": "2"}]),
        ('cidrsubnet("10.0.0.0/16", 8, 2)', "10.0.2.0/24"),
        ('cidrsubnets("10.1.0.0/16", 4, 4, 8)', ["10.1.0.0/20", "10.1.16.0/20", "10.1.32.0/24"]),
        ('cidrhost("10.0.0.0/24", 5)', "10.0.0.5"),
        ('cidrnetmask("10.0.0.0/12")', "255.240.0.0"),
        ("abs(-2)", 2),
        ("ceil(1.2)", 2),
        ("floor(1.8)", 1),
        ("pow(2, 10)", 1024),
        ("signum(-4)", -1),
        ('parseint("ff", 16)', 255),
        ("log(8, 2)", 3),
        ('basename("a/b/c.tf")', "c.tf"),
        ('dirname("a/b/c.tf")', "a/b"),
        ('sensitive("x")', "x"),
        ('nonsensitive("x")', "x"),
    ],
)
def test_functions(text: str, value: Any) -> None:
    assert ev(text) == value


def test_toset_is_a_set() -> None:
    v = ev('toset(["b", "a"])')
    assert isinstance(v, TSet)
    with pytest.raises(EvalError):
        ev('toset(["a"])[0]')


@pytest.mark.parametrize(
    "text",
    [
        "range(10000000)",
        'format("%99999s", "x")',
        "pow(2, 100000)",
        'regex("(", "x")',
        "element([], 0)",
        "slice([1], 0, 5)",
        'cidrsubnet("10.0.0.0/30", 8, 1)',
        'coalesce(null, "")',
        "one([1, 2])",
    ],
)
def test_function_errors_are_eval_errors(text: str) -> None:
    with pytest.raises(EvalError):
        ev(text)


def test_group_refs_materialize_to_one_ref() -> None:
    refs = GroupRefs([Ref("aws_subnet.a[0]"), Ref("aws_subnet.a[1]")], Ref("aws_subnet.a"))
    assert refs[1] == Ref("aws_subnet.a[1]")
    assert materialize({"ids": refs}) == {"ids": Ref("aws_subnet.a")}


# -- variable types -----------------------------------------------------------------------------


def test_type_conversion_fills_optional_attributes() -> None:
    t = parse_type(
        parse_expression(
            "list(object({ name = string, size = optional(number, 8),"
            " tags = optional(map(string)) }))"
        ),
        literal_scope(),
    )
    assert convert([{"name": 1}], t) == [{"name": "1", "size": 8, "tags": None}]
    assert convert([{"name": "a", "size": "3", "extra": 1}], t) == [
        {"name": "a", "size": 3, "tags": None}
    ]
    with pytest.raises(EvalError):
        convert([{"size": 1}], t)  # name is required
    assert convert([U], t) == [U]


@pytest.mark.parametrize(
    ("type_text", "value", "converted"),
    [
        ("string", 5, "5"),
        ("string", True, "true"),
        ("number", "7", 7),
        ("bool", "false", False),
        ("set(string)", ["b", "a", "b"], ["a", "b"]),
        ("map(number)", {"a": "1"}, {"a": 1}),
        ("tuple([string, number])", [1, "2"], ["1", 2]),
        ("any", {"x": [1]}, {"x": [1]}),
        ('"string"', 1, "1"),  # terraform 0.11 quoted types
        ("list", ["a"], ["a"]),
    ],
)
def test_type_conversions(type_text: str, value: Any, converted: Any) -> None:
    assert convert(value, parse_type(parse_expression(type_text), literal_scope())) == converted


@pytest.mark.parametrize(
    ("type_text", "value"),
    [("number", "x"), ("list(string)", "a"), ("bool", 2), ("map(string)", [1])],
)
def test_type_mismatch(type_text: str, value: Any) -> None:
    with pytest.raises(EvalError):
        convert(value, parse_type(parse_expression(type_text), literal_scope()))
