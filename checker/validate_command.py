"""`mc validate SPEC LOG`: read a log with the spec's observer, match it against the spec
(checker.validate), say the verdict and write the matched behaviour (--html, --dot).

Exit codes (docs/errors.md): 0 accepted, 16 diverged, 17 undecided; a log the observer
cannot read is 151, an observer that raises otherwise is 150."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from checker.errors import ConfigError, EvaluationError, ExitCode, McError, SpecError, described
from checker.loader import load_model
from checker.reports import dot, html, outputs
from checker.reports.graph import describe_action, trace_graph
from checker.validate import (
    ACCEPTED,
    DIVERGED,
    UNKNOWN,
    Observed,
    Validation,
    load_observer,
    validate,
)
from checker.values import show

VERDICT_CODES = {ACCEPTED: ExitCode.OK, DIVERGED: ExitCode.DIVERGED}


class Interrupted(McError):
    """Ctrl-C or SIGTERM during the search: no verdict."""

    exit_code = ExitCode.INCOMPLETE


def read_log(observer: Any, log: str) -> Observed:
    """The observer's reading of `log`: ValueError or OSError are the log's fault (151)."""
    if not os.path.isfile(log):
        raise ConfigError(f"{log}: no such log file")
    try:
        observed = observer.read(log)
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{log}: cannot be read as a log of this spec: {exc}") from exc
    except Exception as exc:  # the observer's own failure, not the log's
        raise SpecError(f"{observer.__file__}: read({log!r}) raised {described(exc)}") from exc
    if not isinstance(observed, Observed):
        raise SpecError(
            f"{observer.__file__}: read() returned {type(observed).__name__}, not Observed"
        )
    return observed


def checked_projection(observer: Any) -> Callable[[Any], Mapping[str, Any]]:
    """The observer's `observe`, its failures an evaluation error naming the state."""

    def project(state: Any) -> Mapping[str, Any]:
        try:
            return observer.observe(state)
        except Exception as exc:
            raise EvaluationError(
                "projection", "observe", f"raised {described(exc)}", state=state, cause=exc
            ) from exc

    return project


def run(
    spec: str,
    log: str,
    defines: Mapping[str, str],
    *,
    max_hidden: int,
    max_states: int,
    ignore: Sequence[str],
    html_path: str | None,
    dot_path: str | None,
    json_path: str | None,
    echo: Callable[[str], None],
) -> int:
    wanted = outputs.Outputs(html_path=html_path, dot_path=dot_path, json_path=json_path)
    wanted.validate([spec, log])
    observer = load_observer(spec)
    observed = read_log(observer, log)
    constants = {**observed.constants, **defines}
    model = load_model(spec, constants)
    unknown = (
        sorted(set(ignore) - set(observed.observations[0].image)) if observed.observations else []
    )
    if unknown:
        raise ConfigError(
            f"--ignore {unknown[0]}: not a projected variable (variables:"
            f" {', '.join(observed.observations[0].image)})"
        )
    deferred = tuple(getattr(observer, "DEFERRED", ()))
    unknown_actions = sorted(set(deferred) - {a.name for a in model.actions})
    if unknown_actions:
        raise SpecError(
            f"{observer.__file__}: DEFERRED names {unknown_actions[0]}, not an action of the spec"
        )
    try:
        result = validate(
            model,
            checked_projection(observer),
            observed,
            max_hidden=max_hidden,
            max_states=max_states,
            ignore=ignore,
            deferred=deferred,
        )
    except KeyboardInterrupt:
        raise Interrupted(f"{log}: interrupted (Ctrl-C or SIGTERM) before a verdict") from None
    echo(text(spec, log, result, constants))
    title = f"{os.path.basename(spec)} against {os.path.basename(log)}: {result.verdict}"
    if html_path:
        with outputs.writing("--html", html_path) as target, open(target, "w") as out:
            out.write(html.render_trace(result.trace, title))
    if dot_path:
        with outputs.writing("--dot", dot_path) as target:
            dot.write(trace_graph(result.trace), target, "validated")
    if json_path:
        with outputs.writing("--json", json_path) as target, open(target, "w") as out:
            json.dump(as_dict(spec, log, result), out, indent=2)
            out.write("\n")
    return int(VERDICT_CODES.get(result.verdict, ExitCode.UNDECIDED))


def as_dict(spec: str, log: str, r: Validation) -> dict[str, Any]:
    """The verdict and its figures, for tables (`--json`)."""
    return {
        "spec": spec,
        "log": log,
        "verdict": r.verdict,
        "records": r.records,
        "images": r.observations,
        "matched": r.matched,
        "offset": r.offset,
        "record": r.label or None,
        "reason": r.reason or None,
        "differences": [
            {"variable": d.variable, "spec": _value(d.spec), "log": _value(d.observed)}
            for d in r.differences
        ],
        "closest_step": describe_action(r.closest.action, r.closest.params)
        if r.closest is not None
        else None,
        "quick_pass_stopped_at": r.quick.offset if r.quick is not None else None,
        "hidden_steps": r.hidden_steps,
        "states": r.states,
        "seconds": round(r.seconds, 3),
        "max_hidden": r.max_hidden,
        "ignored": list(r.ignored),
        "constants": r.constants,
        "notes": r.notes,
    }


def _value(v: Any) -> str:
    return "?" if v is UNKNOWN else show(v)


def text(spec: str, log: str, r: Validation, constants: Mapping[str, str]) -> str:
    lines = [
        f"mc validate {spec} {log}",
        f"  {r.records:,} records, {r.observations:,} of them change what the projection shows",
        "  constants: " + " ".join(f"{k}={v}" for k, v in constants.items()),
        *(f"  {note}" for note in r.notes),
    ]
    if r.ignored:
        lines.append("  not compared (--ignore): " + ", ".join(r.ignored))
    stats = (
        f"{r.states:,} states generated, at most {r.hidden_steps} hidden steps before an"
        f" image, {r.seconds:.1f} s"
    )
    if r.verdict == ACCEPTED:
        lines.append(
            f"Accepted: a behaviour of the spec shows each of the {r.observations:,} images"
            f" in turn ({len(r.trace):,} states; {stats})."
        )
        return "\n".join(lines)
    where = f"offset {r.offset} ({r.label})"
    if r.verdict == DIVERGED:
        lines.append(
            f"Diverged at {where}: no behaviour of the spec that shows the {r.matched:,} images"
            f" before it shows this one, after at most {r.max_hidden} hidden steps ({stats})."
        )
    else:
        lines.append(
            f"Undecided at {where}: {r.reason} reached, so the states the search dropped may"
            f" explain it ({r.matched:,} of {r.observations:,} images matched; {stats})."
            " Raise the bound to decide."
        )
        q = r.quick
        if q is not None and q.offset is not None:
            lines.append(
                f"  the quick pass (the fewest hidden steps before each image) stopped at offset"
                f" {q.offset} ({q.label})"
            )
            if q.closest is not None:
                name = describe_action(q.closest.action, q.closest.params)
                lines.append(f"  its closest step, {name}, differs from the log in:")
                for d in q.differences:
                    lines.append(
                        f"    {d.variable}: spec {_value(d.spec)}, log {_value(d.observed)}"
                    )
    lines.append(
        f"  spec states possible just before it: {len(r.before):,}, showing"
        f" {len(r.before_images)} image(s):"
    )
    for image in r.before_images[:3]:
        lines.append("    " + ", ".join(f"{k}={_value(v)}" for k, v in image.items()))
    if r.closest is None and r.verdict == DIVERGED:
        lines.append("  no step from these states changes what the log shows")
    if r.closest is not None and r.verdict == DIVERGED:  # a cut search's nearest means little
        name = describe_action(r.closest.action, r.closest.params)
        lines.append(f"  the closest step, {name}, differs from the log in:")
        for d in r.differences:
            lines.append(f"    {d.variable}: spec {_value(d.spec)}, log {_value(d.observed)}")
    if r.trace:
        lines.append(f"  the matched prefix: {len(r.trace):,} states (--html, --dot draw it)")
    return "\n".join(lines)
