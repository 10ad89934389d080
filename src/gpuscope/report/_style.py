"""The HTML report's stylesheet, inlined so the file works offline (system fonts only)."""

from __future__ import annotations

CSS = """
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#ffffff; --soft:#f6f8fa;
  --ok:#1a7f37; --info:#0969da; --warning:#9a6700; --critical:#cf222e; --bar:#4c8bf5; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--soft); color: var(--fg);
  font: 14px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
header, main, footer { max-width: 1200px; margin: 0 auto; padding: 0 24px; }
footer { color: var(--muted); font-size: 12px; padding-bottom: 24px; }
header { padding-top: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; }
header p { color: var(--muted); margin: 0 0 16px; }
section.top { background: var(--bg); border: 1px solid var(--line); border-radius: 8px;
  padding: 4px 24px 16px; margin: 0 0 24px; }
h2 { font-size: 20px; border-bottom: 1px solid var(--line); padding-bottom: 6px; }
h3 { font-size: 16px; margin: 24px 0 8px; }
h4 { font-size: 14px; margin: 16px 0 6px; }
section.finding { border-left: 4px solid var(--line); padding: 2px 0 4px 14px; margin: 12px 0; }
section.finding.warning { border-color: var(--warning); }
section.finding.critical { border-color: var(--critical); }
section.finding.info { border-color: var(--info); }
.badge { display: inline-block; font-size: 12px; font-weight: 600; padding: 0 8px;
  border-radius: 10px; color: #fff; background: var(--info); margin-right: 6px;
  vertical-align: 1px; }
.badge.warning { background: var(--warning); } .badge.critical { background: var(--critical); }
.badge.ok { background: var(--ok); }
.note { border: 1px solid var(--line); border-left: 6px solid var(--info); border-radius: 6px;
  padding: 8px 12px; margin: 10px 0; background: #ddf4ff; }
.note.ok { border-left-color: var(--ok); background: #dafbe1; }
.note.warning { border-left-color: var(--warning); background: #fff8c5; }
.note.critical { border-left-color: var(--critical); background: #ffebe9; }
.note strong { margin-right: 6px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 18px; margin: 6px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 6px 0 14px; font-variant-numeric: tabular-nums; }
caption { text-align: left; color: var(--muted); font-size: 13px; padding: 2px 0 4px; }
th, td { border: 1px solid var(--line); padding: 3px 9px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td, th { white-space: nowrap; } td:has(code) { white-space: normal; }
td.num, th.num { text-align: right; }
code { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  overflow-wrap: anywhere; }
code[title], span[title] { cursor: help; text-decoration: underline dotted var(--muted); }
p.caption { color: var(--muted); font-size: 13px; margin: 8px 0 2px; }
ul.names { margin: 2px 0 10px; padding-left: 20px; }
div.scroll { max-width: 100%; overflow-x: auto; }
figure.figure { margin: 10px 0 16px; max-width: 960px; }
figure.figure figcaption { font-weight: 600; font-size: 13px; margin: 0 0 4px; }
svg.chart { display: block; margin: 4px 0; }
svg.chart.narrow { display: none; }
svg.chart text { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  fill: var(--fg); }
svg.chart .bar { fill: var(--bar); } svg.chart g:hover .bar { fill: #0550ae; }
svg.chart .bar-value { fill: var(--muted); }
svg.chart .segment:hover { opacity: 0.8; }
svg.chart .axis { stroke: #8c959f; stroke-width: 1; }
svg.chart .line { fill: none; stroke: var(--bar); stroke-width: 2; }
svg.chart .dot { fill: var(--bar); }
svg.chart .mark-box { stroke: var(--critical); stroke-width: 1.5; }
svg.chart .mark-label { font-weight: 700; }
svg.chart .lane-label { paint-order: stroke; stroke: #fff; stroke-width: 3px; }
ul.legend { list-style: none; padding: 0; margin: 2px 0 6px; display: flex; flex-wrap: wrap;
  gap: 2px 16px; font-size: 13px; }
ul.legend .swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px;
  margin-right: 6px; vertical-align: -1px; }
ul.marks { list-style: none; padding: 0; margin: 2px 0 6px; font-size: 13px; }
ul.marks .mark-number { display: inline-block; min-width: 18px; font-weight: 700;
  color: var(--critical); }
a { color: var(--info); }
@media (max-width: 700px) {
  header, main, footer { padding: 0 10px; }
  header { padding-top: 14px; }
  section.top { padding: 2px 12px 10px; }
  svg.chart.wide { display: none; } svg.chart.narrow { display: block; }
  dl.facts { grid-template-columns: minmax(80px, max-content) 1fr; gap: 2px 10px; }
  td, th { white-space: normal; } td.num, th.num { white-space: nowrap; }
  td code { overflow-wrap: break-word; }  /* a long name wraps in lines, not a letter a line;
    a table too wide for them scrolls in its box */
}
"""
