"""`--junit PATH`: JUnit XML, which CI systems show as test results.

One <testsuite> per spec, one <testcase> per (spec, invariant) and per (spec, temporal
property). A violated invariant or property is a <failure> carrying the trace (a lasso for a
property); one the search could not decide (it stopped at another violation, a deadlock, an
error, or a bound) is <skipped> with the reason. A deadlock adds a failing "deadlock" case;
an exception in an action or `init`, or a spec that could not be loaded, adds an
"(exploration)" case with an <error>. A spec with neither invariants nor properties gets a
passing "(exploration)" case, so that it still shows. Each warning of the vacuity check (an
action never enabled, ...) is a "(vacuity) NAME" case, <skipped> as JUnit has no warnings, or
a <failure> under --strict.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from checker.reports.text import behavior_intro, format_behavior, headline, render
from checker.result import CheckResult, NotChecked

EXPLORATION = "(exploration)"
_STEP_KINDS = ("step property", "refinement")  # the errors of a step check (checker.steps)
VACUITY = "(vacuity)"  # a test case per warning of the vacuity check: "(vacuity) fetch"
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    """XML 1.0 cannot hold most control characters, even escaped."""
    return _INVALID_XML.sub("\ufffd", text)


def classname(result: CheckResult | NotChecked) -> str:
    """`specs.kip903.Kip903`: the file as a dotted path, then the spec class."""
    module = result.spec.removesuffix(".py").strip("./").replace("/", ".").replace("\\", ".")
    return f"{module}.{result.spec_name}" if isinstance(result, CheckResult) else module


def _trace_text(result: CheckResult) -> str:
    return "\n".join(headline(result) + [behavior_intro(result)] + format_behavior(result)) + "\n"


def _case(suite: ET.Element, result: CheckResult | NotChecked, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=classname(result), name=name)


def _outcome(case: ET.Element, tag: str, message: str, kind: str, text: str = "") -> None:
    element = ET.SubElement(case, tag, message=_clean(message), type=kind)
    if text:
        element.text = _clean(text)


def _suite(root: ET.Element, result: CheckResult | NotChecked) -> ET.Element:
    suite = ET.SubElement(root, "testsuite", name=_clean(f"{result.spec_name} ({result.spec})"))
    if isinstance(result, NotChecked):
        case = _case(suite, result, EXPLORATION)
        kind = "SpecError" if result.exit_code == 150 else "ConfigError"
        _outcome(case, "error", result.message, kind)
        ET.SubElement(suite, "system-out").text = _clean(result.message)
        return suite
    props = ET.SubElement(suite, "properties")
    for key, value in result.constants.items():
        ET.SubElement(props, "property", name=f"constant.{key}", value=_clean(str(value)))
    for key, value in (
        ("verdict", result.verdict),
        ("exit_code", int(result.exit_code)),
        ("distinct_states", result.distinct_states),
        ("depth", result.depth),
    ):
        ET.SubElement(props, "property", name=key, value=str(value))
    violated = (
        f"invariant {result.invariant}"
        if result.invariant
        else f"step property {result.step_property}"
        if result.step_property
        else f"temporal property {result.property}"
    )
    stopped = {
        "violation": f"the search stopped at the violation of {violated}",
        "deadlock": "the search stopped at a deadlock",
        "error": "the search stopped at an error",
        "incomplete": f"search incomplete: {result.bound}; no violation in the"
        f" {result.distinct_states:,} states explored, but not a proof",
    }.get(result.verdict, "")
    err = result.error
    for name in result.invariants:
        case = _case(suite, result, name)
        if result.verdict == "violation" and name == result.invariant:
            _outcome(
                case, "failure", f"invariant {name} is violated", "violation", _trace_text(result)
            )
        elif result.verdict == "error" and err and err.kind == "invariant" and err.name == name:
            _outcome(case, "error", headline(result)[0], "EvaluationError", _trace_text(result))
        elif result.verdict != "ok" and not result.complete:  # else every state was checked
            ET.SubElement(case, "skipped", message=_clean(f"not decided: {stopped}"))
    for name, formula in result.properties.items():
        case = _case(suite, result, name)
        if result.verdict == "violation" and name == result.property:
            message = f"temporal property {name} ({formula}) is violated"
            _outcome(case, "failure", message, "liveness", _trace_text(result))
        elif result.verdict == "error" and err and err.kind == "property" and err.name == name:
            _outcome(case, "error", headline(result)[0], "EvaluationError", _trace_text(result))
        elif result.verdict != "ok":
            ET.SubElement(case, "skipped", message=_clean(f"not decided: {stopped}"))
    for name in result.step_properties:
        case = _case(suite, result, name)
        if result.verdict == "violation" and name == result.step_property:
            message = result.step_violation or f"step property {name} is violated"
            _outcome(case, "failure", message, "step", _trace_text(result))
        elif result.verdict == "error" and err and err.kind in _STEP_KINDS and err.name == name:
            _outcome(case, "error", headline(result)[0], "EvaluationError", _trace_text(result))
        elif result.verdict != "ok" and not result.complete:
            ET.SubElement(case, "skipped", message=_clean(f"not decided: {stopped}"))
    for name in result.reachable:  # a failure if never reached; the witness in its output
        case = _case(suite, result, name)
        if name in result.unreached:
            message = f"reachability property {name} is never reached"
            _outcome(case, "failure", message, "unreached", "\n".join(headline(result)) + "\n")
        elif result.verdict != "ok" and not result.complete:
            ET.SubElement(case, "skipped", message=_clean(f"not decided: {stopped}"))
        elif name == result.witness:
            ET.SubElement(case, "system-out").text = _clean(_trace_text(result))
    if result.verdict == "deadlock":
        _outcome(
            _case(suite, result, "deadlock"),
            "failure",
            "deadlock reached",
            "deadlock",
            _trace_text(result),
        )
    elif (
        result.verdict == "error"
        and err
        and not (err.kind in ("invariant", "property") or err.kind in _STEP_KINDS)
    ):
        _outcome(
            _case(suite, result, EXPLORATION),
            "error",
            headline(result)[0],
            "EvaluationError",
            _trace_text(result),
        )
    elif not (
        result.invariants or result.properties or result.reachable or result.step_properties
    ) and result.verdict in (
        "ok",
        "incomplete",
    ):
        case = _case(suite, result, EXPLORATION)
        if result.verdict == "incomplete":
            ET.SubElement(case, "skipped", message=_clean(stopped))
    for warning in result.warnings:  # skipped (a warning); with --strict a failure
        case = _case(suite, result, f"{VACUITY} {warning.name}")
        if result.strict:
            _outcome(case, "failure", f"--strict: {warning.message}", "vacuity")
        else:
            ET.SubElement(case, "skipped", message=_clean(f"warning: {warning.message}"))
    ET.SubElement(suite, "system-out").text = _clean(render(result))
    return suite


def _count(root: ET.Element) -> None:
    """Set tests/failures/errors/skipped on every suite and on the root."""
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        counts = {
            "tests": len(cases),
            "failures": sum(1 for c in cases if c.find("failure") is not None),
            "errors": sum(1 for c in cases if c.find("error") is not None),
            "skipped": sum(1 for c in cases if c.find("skipped") is not None),
        }
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))


def to_xml(results: Sequence[CheckResult | NotChecked]) -> ET.ElementTree:
    root = ET.Element("testsuites", name="mc")
    seconds = 0.0
    for result in results:
        suite = _suite(root, result)
        if isinstance(result, CheckResult):
            suite.set("time", f"{result.seconds:.3f}")
            seconds += result.seconds
        else:
            suite.set("time", "0")
    _count(root)
    root.set("time", f"{seconds:.3f}")
    tree = ET.ElementTree(root)
    ET.indent(tree)
    return tree


def write(results: Sequence[CheckResult | NotChecked], path: str) -> None:
    to_xml(results).write(path, encoding="utf-8", xml_declaration=True)
