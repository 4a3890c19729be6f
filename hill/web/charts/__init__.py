"""The pictures drawn on the server as inline SVG, geometry and colours
here, markup in the templates: line charts and error bars (lines.py), the
reality show's bump chart (bump.py), the analytics' heat maps, strategy
charts and legends (analytics.py).  Pure: render.py makes them the
templates' globals.

May import: MarkupSafe.  Nothing of the hill, no I/O.
"""
