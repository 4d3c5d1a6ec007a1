"""The HCL parser: tree-sitter tree → AST, templates, operators, error reporting."""

from __future__ import annotations

import pytest

from scanner.sources.terraform.hcl.expressions import evaluate
from scanner.sources.terraform.hcl.json_syntax import parse_tf_json
from scanner.sources.terraform.hcl.parse import (
    Cond,
    Lit,
    ParseError,
    Template,
    Traversal,
    parse_expression,
    parse_hcl,
    parse_template,
)
from scanner.sources.terraform.hcl.values import literal_scope


def ev(text: str) -> object:
    return evaluate(parse_expression(text), literal_scope())


def test_blocks_attributes_and_line_numbers() -> None:
    src = b"""# header
resource "aws_instance" "gpu" {
  ami = "ami-1"

  root_block_device {
    encrypted = true
  }
}

locals {
  a = 1
}
"""
    body = parse_hcl(src).body
    assert [b.type for b in body.blocks] == ["resource", "locals"]
    res = body.blocks[0]
    assert res.labels == ["aws_instance", "gpu"]
    assert (res.start_line, res.end_line) == (2, 8)
    assert res.body.attrs["ami"].line == 3
    assert isinstance(res.body.attrs["ami"].expr, Lit)
    nested = res.body.blocks[0]
    assert nested.type == "root_block_device" and nested.start_line == 5
    assert body.blocks[1].body.attrs["a"].expr.value == 1  # type: ignore[attr-defined]


def test_one_line_blocks_and_identifier_labels() -> None:
    body = parse_hcl(b'module "m" { source = "./m" }\nfoo bar {}\n').body
    assert body.blocks[0].body.attrs["source"].expr.value == "./m"  # type: ignore[attr-defined]
    assert body.blocks[1].labels == ["bar"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1),
        ("-2", -2),
        ("1.5", 1.5),
        ("1.0e3", 1000),  # (tree-sitter-hcl wants a fraction before an exponent)
        ("1.5e-2", 0.015),
        ("true", True),
        ("null", None),
        ('"a\\tb\\n\\"q\\" \\\\ \\u00e9"', 'a\tb\n"q" \\ é'),
        ('"$${not} %%{this}"', "${not} %{this}"),
        ('"x-${1 + 1}-y"', "x-2-y"),
        ('"${true}"', True),  # a lone interpolation keeps its type
        ('"%{ if true }yes%{ else }no%{ endif }"', "yes"),
        ('"%{ for x in [1, 2] }<${x}>%{ endfor }"', "<1><2>"),
        ('"%{ for k, v in {a = 1} }${k}=${v}%{ endfor }"', "a=1"),
        ('"a  ${~ "b" ~}  c"', "abc"),
        ("[1, 2, 3,]", [1, 2, 3]),
        ('{a = 1, "b" = 2, c: 3}', {"a": 1, "b": 2, "c": 3}),
        ('{("k${1}") = 1}', {"k1": 1}),
        ("[1, [2, 3]][1][0]", 2),
        ("{a = {b = [5]}}.a.b[0]", 5),
        ("[{x = 1}, {x = 2}][*].x", [1, 2]),
        ("[{x = 1}, {x = 2}].*.x", [1, 2]),
        ("[[1, 2]].0.1", 2),  # legacy index
    ],
)
def test_literals_and_templates(text: str, value: object) -> None:
    assert ev(text) == value


def test_heredocs() -> None:
    src = b"""a = <<EOT
  keep ${"indent"}
EOT
b = <<-EOT
    x
      ${"y"}
    z
  EOT
c = <<EOT
literal \\n and $${x}
EOT
"""
    attrs = parse_hcl(src).body.attrs
    scope = literal_scope()
    assert evaluate(attrs["a"].expr, scope) == "  keep indent\n"
    assert evaluate(attrs["b"].expr, scope) == "x\n  y\nz\n"
    assert evaluate(attrs["c"].expr, scope) == "literal \\n and ${x}\n"


def test_template_directives_strip_markers() -> None:
    src = b"""a = <<EOT
%{ for x in ["a", "b"] ~}
${x}
%{ endfor ~}
end
EOT
"""
    assert evaluate(parse_hcl(src).body.attrs["a"].expr, literal_scope()) == "a\nb\nend\n"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 2 - 3", 5),
        ("7 % 4 * 2", 6),
        ("-3 + 5", 2),
        ("true || false && false", True),
        ("!true == false", True),
        ("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 4 == false", True),
        ("true ? 1 : false ? 2 : 3", 1),
        ("false ? 1 : true ? 2 : 3", 2),
        ("false ? 1 : false ? 2 : 3", 3),
        ("(false ? true : false) ? 2 : 3", 3),  # parenthesised: left-nested on purpose
        ('1 == 1 ? "a" : "b"', "a"),
    ],
)
def test_operator_precedence_and_conditionals(text: str, value: object) -> None:
    assert ev(text) == value


def test_conditional_is_right_associative_in_the_ast() -> None:
    expr = parse_expression("a ? 1 : b ? 2 : 3")
    assert isinstance(expr, Cond)
    assert isinstance(expr.cond, Traversal) and expr.cond.root == "a"
    assert isinstance(expr.other, Cond)


def test_comments_inside_collections_and_calls() -> None:
    src = b"""x = [
  1, # one
  // two
  2, /* three */ 3
]
y = {
  a = 1 # c
  # d
  b = 2
}
z = max(1, # c
  5)
"""
    attrs = parse_hcl(src).body.attrs
    scope = literal_scope()
    assert evaluate(attrs["x"].expr, scope) == [1, 2, 3]
    assert evaluate(attrs["y"].expr, scope) == {"a": 1, "b": 2}
    assert evaluate(attrs["z"].expr, scope) == 5


def test_for_expressions_and_traversals_parse() -> None:
    expr = parse_expression("[for s in var.subnets : s.id if s.public]")
    assert type(expr).__name__ == "ForExpr"
    t = parse_expression("aws_subnet.a[0].id")
    assert isinstance(t, Traversal) and t.root == "aws_subnet"
    assert [op[0] for op in t.ops] == ["a", "i", "a"]
    s = parse_expression("aws_subnet.a[*].id")
    assert isinstance(s, Traversal) and s.ops[-1][0] == "s"


@pytest.mark.parametrize(
    ("src", "line"),
    [
        (b'resource "a" "b" {\n  x = \n}\n', 2),
        (b'resource "a" "b" {\n  x = 1\n', 3),  # the missing "}" is at the end
        (b"a = 1\nb = [1, 2\nc = 3\n", 2),
        (b'a = "unterminated\n', 1),
        (b"a = 1\n\n\nresource {{{\n", 4),
        (b"a = 1 +\n", 1),
    ],
)
def test_syntax_errors_are_reported_with_a_line(src: bytes, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        parse_hcl(src)
    assert exc.value.line is not None
    assert abs(exc.value.line - line) <= 1
    assert "syntax error" in exc.value.reason


def test_absurd_nesting_is_a_parse_error_not_a_crash() -> None:
    src = b"a = " + b"[" * 3000 + b"]" * 3000 + b"\n"
    with pytest.raises(ParseError):
        parse_hcl(src)


def test_skip_comments_are_found_only_in_comments() -> None:
    src = b"""# gpuaudit:skip=EBS-001:reason one
resource "a" "b" {
  description = "gpuaudit:skip=EBS-002:not a comment"
  // gpuaudit:skip=EBS-003:two
  /* gpuaudit:skip=VPC-001:three */
}
"""
    parsed = parse_hcl(src)
    assert [(c.line, c.text.split("=")[1][:7]) for c in parsed.skip_comments] == [
        (1, "EBS-001"),
        (4, "EBS-003"),
        (5, "VPC-001"),
    ]
    assert 1 in parsed.comment_only_lines and 3 not in parsed.comment_only_lines


def test_json_templates() -> None:
    assert isinstance(parse_template("plain"), Lit)
    t = parse_template('a-${var.x}-"q"')
    assert isinstance(t, Template)
    assert evaluate(parse_template('${1 + 2}-"q"\\n'), literal_scope()) == '3-"q"\\n'


def test_tf_json_body() -> None:
    body = parse_tf_json(
        """{
  "variable": {"size": {"default": "${not a template}", "type": "string"}},
  "resource": {
    "aws_ebs_volume": {
      "v": {
        "size": "${var.size}",
        "tags": {"Name": "x"},
        "count": 2,
        "dynamic": {"ebs": {"for_each": "${[1]}", "content": {"a": "${ebs.value}"}}},
        "root_block_device": {"encrypted": true}
      }
    }
  }
}"""
    )
    var, res = body.blocks
    assert var.type == "variable" and var.labels == ["size"]
    assert var.body.attrs["default"].expr.value == "${not a template}"  # type: ignore[attr-defined]
    assert res.labels == ["aws_ebs_volume", "v"]
    assert res.start_line == 5
    assert isinstance(res.body.attrs["size"].expr, Template)
    assert "tags" in res.body.attrs  # a map argument, not a block
    assert [b.type for b in res.body.blocks] == ["dynamic", "root_block_device"]


def test_tf_json_errors() -> None:
    with pytest.raises(ParseError) as exc:
        parse_tf_json('{\n  "resource": [1,\n}')
    assert exc.value.line == 3
    with pytest.raises(ParseError):
        parse_tf_json("[]")


def test_tf_json_duplicate_keys_are_errors_naming_the_key_and_line() -> None:
    # json.loads keeps the last of two keys: `"encrypted": false, "encrypted": true` read as
    # encrypted, where terraform refuses the file
    from scanner.sources.terraform.hcl.json_syntax import parse_tfvars_json

    with pytest.raises(ParseError) as err:
        parse_tf_json('{"resource": {"aws_ebs_volume": {"v": {\n  "encrypted": false,\n'
                      '  "encrypted": true\n}}}}')
    assert "duplicate key 'encrypted'" in err.value.reason and err.value.line == 3
    with pytest.raises(ParseError, match="duplicate key 'pw'"):
        parse_tfvars_json('{"pw": "a", "pw": "b"}')
    assert parse_tfvars_json('{"a": {"x": 1}, "b": {"x": 2}}') == {"a": {"x": 1}, "b": {"x": 2}}
