"""MindCopilot's metrics (Fang et al., IJCAI 2026, §4 and §5.3), one per file, each a pure
function over records or judge answers:

- `acceptance`: acceptance rate per writer and pooled (Table 5).
- `har`: the Hierarchical Acceptance Rate judge call and verdict (§4.1, App. B.5, App. H).
- `har_rate`: HAR pooled over queries (Tables 4, 11).
- `alignment`: a judge's alignment rate and Cohen's kappa with expert labels (Table 1).
- `ked`: Knowledge-aware Editing Distance from itemised edit labels and weights (§4.2).
- `ked_calibrate`: non-negative KED weights fitted to editing duration (spec A3.2).
- `edit_distance`: character and word Levenshtein distances (Table 2 baselines).
- `correlate`: Pearson and Spearman against editing duration (Table 2).
"""
