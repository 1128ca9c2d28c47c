"""The model's identity of a state: what the search meets it by (`met`: the state, or its
view) and its fingerprint (`fingerprint_of`: of its encoding, or of its view's; with symmetry,
the smallest over the renamings of the symmetric values)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from checker.errors import OUTSIDE, EvaluationError, StateError, raised
from checker.model.checked import spec_encoded, variables_differ
from checker.symmetry import Permutation, renamed_encodings
from checker.values.encoding import encode, fingerprint
from checker.values.record import Record, freeze

if TYPE_CHECKING:
    from checker.model.bound import Bound

_REDUCED_CACHE = 1 << 18  # entries (about 25 MB) of fingerprint_of's cache, per process


class Identity:
    """What identifies the states of `model`: its view and symmetry."""

    def __init__(self, model: Bound) -> None:
        self.model = model
        self.view = model.view
        self.symmetry = model.symmetry
        self.reduces = model.reduces
        self._reduced_fps: dict[int, int] = {}  # concrete fingerprint -> fingerprint_of

    def __getstate__(self) -> dict[str, Any]:
        """A copy sent to Spark executors travels without the driver's fingerprint cache."""
        return {**self.__dict__, "_reduced_fps": {}}

    def fingerprint_of(self, state: Record, data: bytes | None = None) -> int:
        """What identifies `state` in the search (`data`: its encoding, if known): the
        fingerprint of its encoding, or of its view's; with symmetry, of the smallest of
        those over every renaming of the symmetric values."""
        if data is None:
            data = encode(state)
        raw = fingerprint(data)
        if not self.reduces:
            return raw
        fp = self._reduced_fps.get(raw)
        return self._reduce(state, data, raw) if fp is None else fp

    def _reduce(self, state: Record, data: bytes, raw: int) -> int:
        """`fingerprint_of` a state with a view or a symmetry, which costs a view and a
        renaming per permutation: the result is remembered for the state, and (without a
        view) for its renamings, which are the same state to the search. Most states
        generated were generated before, or are renamings of one that was."""
        if self.symmetry is None:
            best = self.encoded_view(state)
            renamed: list[bytes] = []
        else:
            best, renamed = self._representative(state, data)
        fp = fingerprint(best)
        cache = self._reduced_fps
        if len(cache) + len(renamed) >= _REDUCED_CACHE:
            cache.clear()
        cache[raw] = fp
        for other in renamed:
            cache[fp if other is best else fingerprint(other)] = fp
        return fp

    def _representative(self, state: Record, data: bytes) -> tuple[bytes, list[bytes]]:
        """The smallest encoding (of the view, if any) of the candidate images of `state`
        (checker.symmetry), and the encodings of those images (without a view)."""
        symmetry = self.symmetry
        assert symmetry is not None
        if not symmetry.learned:
            symmetry.learn(self.model.initial_states()[0])  # the same in every process
        if symmetry.names and self.view is not None:
            # (the values' signatures are the state's: two states with one view may have
            # different ones, so with a view every renaming is tried)
            renamings: Sequence[Permutation] = symmetry.permutations
        else:
            renamings = symmetry.renamings_to_try(state)
        if symmetry.names and self.view is None:
            # model values: every image encoded in one C call, with no state built (but the
            # identity's, which is the state's: known)
            if renamings is symmetry.permutations:
                images = symmetry.images[1:]
            else:
                images = tuple([p.moved for p in renamings if p.moved])
            encodings = renamed_encodings(state, images)
            if len(images) < len(renamings):
                encodings.append(data)
            return min(encodings), encodings
        best = None
        renamed = []
        identity = symmetry.identity
        for p in renamings:
            # (the identity's image is the state: permute is not asked, the encoding is known)
            image = state if p is identity else self.permuted(state, p)
            if self.view is None:
                if image is state:
                    other = data
                else:
                    other = spec_encoded(image, "permute", "permute", state=state, params={})
                renamed.append(other)
            else:
                other = self.encoded_view(image)
            if best is None or other < best:
                best = other
        assert best is not None
        return best, renamed

    def encoded_view(self, state: Record) -> bytes:
        return spec_encoded(self.view_of(state), "view", "view", state=state, params={})

    def view_of(self, state: Record) -> Any:
        """The spec's view of `state`, frozen (EvaluationError if the view raises)."""
        assert self.view is not None
        try:
            return freeze(self.view(state))
        except StateError as exc:
            raise EvaluationError(
                "view", "view", f"returned a value that cannot be encoded: {exc}", state=state
            ) from exc
        except OUTSIDE:
            raise
        except BaseException as exc:
            raise EvaluationError("view", "view", raised(exc), state=state, cause=exc) from exc

    def met(self, states: Iterable[Record]) -> Iterable[Any]:
        """What an expander remembers of the states it met: their views (`by_view`), or the
        states."""
        return map(self.view_of, states) if self.model.by_view else states

    def permuted(self, state: Record, p: Permutation) -> Record:
        assert self.symmetry is not None
        try:
            image = self.symmetry.permute(state, p)
        except OUTSIDE:
            raise
        except BaseException as exc:
            raise EvaluationError(
                "permute", "permute", f"{raised(exc)} (renaming {p})", state=state, cause=exc
            ) from exc
        if not isinstance(image, Record) or image.keys() != state.keys():
            what = (
                f"a state {variables_differ(image, state)}"
                if isinstance(image, Record)
                else repr(image)
            )
            raise EvaluationError(
                "permute",
                "permute",
                f"returned {what}; it must return the state with the same variables",
                state=state,
            )
        return image
