"""The walk of one parsed CloudFormation template: its sections (``Parameters``, ``Mappings``,
``Conditions``) checked and handed to the :class:`~.evaluate.Evaluator`, the values of ``NoEcho``
parameters marked sensitive, a notice for each transform that changes what is deployed, the
names fixed per stack collected, then each resource read (:mod:`.resources`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scanner.model import SourceResult
from scanner.sources.cloudformation import yaml_nodes as cfn_yaml
from scanner.sources.cloudformation.evaluate import Evaluator, OverBudget, _text
from scanner.sources.cloudformation.resources import _NAME_PROPERTY, KINDS, ResourceReader


class TemplateReader(ResourceReader):
    """Reads one parsed template (its sections, then each resource) into ``result``."""

    def __init__(
        self,
        where: str,
        loaded: cfn_yaml.LoadedTemplate,
        params: Mapping[str, str],
        region: str | None,
        account_id: str | None,
        result: SourceResult,
    ) -> None:
        super().__init__(where, loaded, region, result)
        self.overrides = params
        self.account_id = account_id

    def read(self) -> None:
        tpl = self.loaded.data
        if not isinstance(tpl, dict):
            self.error("template is not a mapping", 1)
            return
        if "Resources" not in tpl:
            if "AWSTemplateFormatVersion" in tpl:
                self.error("template has no Resources section")
            else:  # e.g. a macro event or a stack-set config that mentions a resource type
                self.notice("not a CloudFormation template (no Resources section); skipped")
            return
        resources = tpl["Resources"]
        if not isinstance(resources, dict):
            self.error("Resources is not a mapping", self.loaded.resources_line)
            return
        sections = {}
        for section in ("Parameters", "Mappings", "Conditions"):
            value = tpl.get(section)
            if value is None:
                value = {}
            if not isinstance(value, dict):
                self.error(f"{section} is not a mapping")
                return
            sections[section] = value
        self._transform_notice(tpl.get("Transform"))
        self._no_echo(sections["Parameters"])
        ev = Evaluator(
            parameters=sections["Parameters"],
            mappings=sections["Mappings"],
            conditions=sections["Conditions"],
            resource_ids=frozenset(resources),
            overrides=self.overrides,
            region=self.region,
            account_id=self.account_id,
            sensitive=self.result.sensitive,
        )
        self.names = self._symbolic_names(ev, resources)
        for logical_id, body in resources.items():
            try:
                self.read_resource(ev, logical_id, body)
            except OverBudget as exc:
                start = self.loaded.resource_lines.get(logical_id, (None, None))[0]
                self.error(f"resource {logical_id}: {exc.reason}; it and the resources after it "
                           "are not read", start)
                return

    def _symbolic_names(self, ev: Evaluator, resources: dict[str, Any]
                        ) -> dict[str, list[tuple[str, str]]]:
        """The names that are built from values not known but fixed per stack (see
        :meth:`Evaluator.symbol`): symbol -> [(logical id, kind)]."""
        names: dict[str, list[tuple[str, str]]] = {}
        for logical_id, body in resources.items():
            if not isinstance(body, dict) or not isinstance(body.get("Type"), str):
                continue
            kind, prop = KINDS.get(body["Type"]), _NAME_PROPERTY.get(body["Type"])
            props = body.get("Properties")
            if kind is None or prop is None or not isinstance(props, dict) or prop not in props:
                continue
            symbol = ev.symbol(props[prop])
            if symbol is not None:
                names.setdefault(symbol, []).append((logical_id, kind))
        return names

    def _no_echo(self, parameters: dict[str, Any]) -> None:
        """The values of ``NoEcho`` parameters (default and ``--cfn-param``) are secret: the
        report step shows them as ``(sensitive)`` wherever they appear."""
        for name, spec in parameters.items():
            if not isinstance(spec, dict) or _text(spec.get("NoEcho")).lower() != "true":
                continue
            values = [spec.get("Default"), self.overrides.get(name)]
            for value in values:
                items = value if isinstance(value, list) else [value]
                if isinstance(value, str) and "," in value:
                    items = [value, *value.split(",")]
                for item in items:
                    if isinstance(item, str | int | float) and not isinstance(item, bool):
                        text = _text(item)
                        self.result.sensitive.update({text, text.strip(),
                                                      json.dumps(text)[1:-1]})

    def _transform_notice(self, transform: Any) -> None:
        names = transform if isinstance(transform, list) else [transform]
        for name in names:
            if name is None or name in ("AWS::Serverless-2016-10-31", "AWS::LanguageExtensions"):
                continue
            self.notice(
                f"template uses the transform {name!r}; resources it adds or changes are not "
                "scanned"
            )
