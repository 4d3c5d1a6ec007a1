"""One place for money: prices (``prices.price``), the monthly-hours constant and the one builder
of savings and their basis text (``money``), the overlap rules of the report totals
(``overlap``), and the Price List API refresh of the catalogue (``refresh``).

Policies say "N units of type T cost X $/h more than they need"; they never format money.
"""
