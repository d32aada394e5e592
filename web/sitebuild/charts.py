"""The charts of the Run tab: the size of each request, in characters of JSON."""

import json

from .strings import say


def request_sizes(call):
    """(fixed, history) in characters of JSON: system + tools, and messages."""
    request = call["request"]
    fixed = len(json.dumps(request.get("system", ""))) + len(json.dumps(request.get("tools", [])))
    return fixed, len(json.dumps(request.get("messages", [])))


def size_label(index, fixed, history, lang):
    return say(lang, "size_label", n=index + 1, total=f"{fixed + history:,}", fixed=f"{fixed:,}",
               history=f"{history:,}")


def mini_chart(calls, lang):
    """The chart beside the step buttons: one bar per model call, a button to that step."""
    sizes = [request_sizes(call) for call in calls]
    top = max(fixed + history for fixed, history in sizes)
    bars = []
    for index, (fixed, history) in enumerate(sizes):
        share = round(100 * (fixed + history) / top)
        fixed_share = round(100 * fixed / (fixed + history)) if fixed + history else 0
        bars.append(
            f'<li><button type="button" class="bar" id="step-{index + 1}" data-step="{index}" '
            f'aria-label="{size_label(index, fixed, history, lang)}" '
            f'style="--size: {share}%; --part: {fixed_share}%"><span class="fill"></span>'
            f'</button></li>'
        )
    return f"""<div class="mini-chart">
  <p class="mini-label"><span id="mini-label">{say(lang, "mini_label")}</span>
    <span class="mini-value" id="mini-value"></span></p>
  <ol class="bars" aria-labelledby="mini-label">{''.join(bars)}</ol>
</div>"""


def size_chart(calls, lang):
    """An inline SVG of stacked bars, one per model call: the fixed part and the history.
    Each bar links to its step in the player."""
    sizes = [request_sizes(call) for call in calls]
    top = max(fixed + history for fixed, history in sizes)
    scale = nice_ceiling(top)
    bar, gap, left, height, bottom = 34, 14, 56, 160, 26
    width = left + len(sizes) * (bar + gap) + gap
    parts = []
    for tick in (0, scale / 2, scale):  # grid lines and their labels
        y = height - tick / scale * (height - 10)
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" '
            f'text-anchor="end">{short_number(tick)}</text>'
        )
    for index, (fixed, history) in enumerate(sizes):
        x = left + gap + index * (bar + gap)
        fixed_height = fixed / scale * (height - 10)
        history_height = history / scale * (height - 10)
        parts.append(
            f'<a class="bar" href="#step-{index + 1}" data-step="{index}" '
            f'aria-label="{size_label(index, fixed, history, lang)}">'
            f'<rect class="fixed" x="{x}" y="{height - fixed_height:.1f}" width="{bar}" '
            f'height="{fixed_height:.1f}"/>'
            f'<rect class="history" x="{x}" y="{height - fixed_height - history_height:.1f}" '
            f'width="{bar}" height="{history_height:.1f}"/>'
            f'<text class="axis" x="{x + bar / 2}" y="{height + 16}" '
            f'text-anchor="middle">{index + 1}</text></a>'
        )
    rows = "".join(f"<tr><td>{n}</td><td>{f:,}</td><td>{h:,}</td><td>{f + h:,}</td></tr>"
                   for n, (f, h) in enumerate(sizes, 1))
    caption = say(lang, "chart_caption", first=short_number(sum(sizes[0])),
                  last=short_number(sum(sizes[-1])), calls=say(lang, "n_calls", n=len(sizes)))
    return f"""<figure class="chart">
<figcaption>{caption}</figcaption>
<svg viewBox="0 0 {width} {height + bottom}" width="{width}" height="{height + bottom}"
  aria-label="{say(lang, "chart_label")}">
{''.join(parts)}
</svg>
<details><summary>{say(lang, "numbers")}</summary>
<table class="numbers"><thead><tr>{say(lang, "numbers_head")}</tr></thead>
<tbody>{rows}</tbody></table></details>
</figure>"""


def nice_ceiling(value):
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is at least value."""
    power = 10 ** max(len(str(int(value))) - 1, 0)
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def short_number(value):
    """A number as the rest of the site writes it: 12,447 (one format in both languages)."""
    return f"{round(value):,}"
