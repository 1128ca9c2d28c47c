---- MODULE HourClock ----
\* The abstract clock of Lamport's Specifying Systems: the hour goes round.
EXTENDS Naturals
VARIABLE hr
HCini == hr \in 1..12
HCnxt == hr' = IF hr # 12 THEN hr + 1 ELSE 1
HC == HCini /\ [][HCnxt]_hr
====
