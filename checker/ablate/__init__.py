"""`mc ablate`: what breaks without each rule of a KIP, in one table.

A spec declares the rules of its protocol change (`rule(...)` in checker.spec). An ablation
checks the spec with every rule on, then with each rule off alone (and, asked, each pair
off), and gives a row per configuration: for each invariant, reachability and temporal
property (and deadlock freedom), whether it holds or the length of its shortest
counterexample, and the states explored. The parts, one job each:

- `checker.ablate.plan`: the rules and columns read from the spec, a task per row (bad input
  refused before any check);
- `checker.ablate.row`: one row's checks, each the `mc check` of the row's constants;
- `checker.ablate.rows`: the rows run side by side in child processes (checker.supervisor:
  signals, memory, progress), or one after another on a Spark session, and the table;
- the table's data types are checker.ablation's, its reports checker.reports.ablation's.
"""
