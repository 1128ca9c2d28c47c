---- MODULE HourMinuteClock ----
\* A clock with minutes (Minutes per hour). It refines HourClock: its minute ticks are
\* stutters of hr. With Skip = h, the hour after h is h + 2: a broken clock.
EXTENDS Naturals
CONSTANTS Minutes, Skip
VARIABLES hr, mn
vars == <<hr, mn>>
Init == hr \in 1..12 /\ mn = 0
Tick == IF mn + 1 < Minutes
          THEN mn' = mn + 1 /\ UNCHANGED hr
          ELSE mn' = 0 /\ hr' = IF hr = Skip THEN ((hr + 1) % 12) + 1 ELSE (hr % 12) + 1
Spec == Init /\ [][Tick]_vars
\* The refinement: this spec implies HourClock's, hr mapped to itself.
HC == INSTANCE HourClock
Refines == HC!HC
\* A step property: the hour changes only on the hour.
OnTheHour == [][hr' # hr => mn' = 0]_vars
====
