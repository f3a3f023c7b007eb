"""Post-processing of `xstage-bench megamoe` result files into issue 12's outputs (scripts layer).

points: loading, the expected matrix and the point chosen per slot; analysis: the sections of the
report (speedup, advisor, Table 2, eq. 14, D sweep, clocks); markdown: their rendering.
"""
