"""docs/tla/HourClock.tla and HourMinuteClock.tla, translated (docs/tla-translated.md): a
refinement (TLA+'s `HC == INSTANCE HourClock` and `PROPERTY HC!HC`) and a step property
(`[][hr' # hr => mn' = 0]_vars`). The same counts as TLC's: 48 states generated, 36
distinct, depth 3; with `-D skip=3` the refinement is violated by the 4-state behavior TLC
prints."""

from checker import Record, Spec, State, action, constant, refines, step_property


class HourClock(Spec):
    """The abstract clock of Lamport's Specifying Systems: the hour goes round."""

    def init(self) -> list[State]:
        return [Record(hr=h) for h in range(1, 13)]  # HCini

    @action
    def tick(self, s: State) -> State:  # HCnxt
        return s.replace(hr=s.hr + 1 if s.hr != 12 else 1)


class HourMinuteClock(Spec):
    """A clock with minutes; it refines HourClock, its minute ticks mapping to stutters."""

    minutes = constant(3, "Minutes: minutes per hour", min=1)
    skip = constant(0, "Skip: the hour after which a broken clock jumps two (0: none)")

    def init(self) -> list[State]:
        return [Record(hr=h, mn=0) for h in range(1, 13)]

    @action
    def tick(self, s: State) -> State:
        if s.mn + 1 < self.minutes:
            return s.replace(mn=s.mn + 1)
        hr = (s.hr + 1) % 12 + 1 if s.hr == self.skip else s.hr % 12 + 1
        return s.replace(hr=hr, mn=0)

    def hour_clock_state(self, s: State) -> State:
        """INSTANCE HourClock: hr is hr."""
        return Record(hr=s.hr)

    refines_hour_clock = refines(HourClock, "hour_clock_state", "PROPERTY HC!HC")

    @step_property
    def on_the_hour(self, s: State, t: State) -> bool:
        """[][hr' # hr => mn' = 0]_vars: the hour changes only on the hour."""
        return t.hr == s.hr or t.mn == 0


spec = HourMinuteClock
