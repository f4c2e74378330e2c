// The HTML report's script (src/report/report_html.cpp inlines it, allowed by its CSP hash): draws
// the Fast_p curves from the embedded data (#report-data). Text goes in through textContent only.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var NS = 'http://www.w3.org/2000/svg';
  // 20 colours that stay apart on white (Tableau 10, then darker and brighter companions); past
  // 20, hues a golden angle apart. Assigned per chart, so a chart never repeats one.
  var palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f',
                 '#393b79', '#ad494a', '#637939', '#8c6d31', '#843c39', '#7b4173', '#3182bd', '#e6550d', '#31a354', '#756bb1'];
  function colour(i) {
    return i < palette.length ? palette[i] : 'hsl(' + Math.round((i * 137.508) % 360) + ',65%,38%)';
  }
  function svg(name, attrs, parent) {
    var n = document.createElementNS(NS, name);
    for (var k in attrs) n.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(n);
    return n;
  }
  function tag(name, attrs, parent, text) {
    var n = document.createElement(name);
    for (var k in attrs) n.setAttribute(k, attrs[k]);
    if (text !== undefined) n.textContent = text;
    if (parent) parent.appendChild(n);
    return n;
  }
  function stepPath(bests, n, sx, sy, xmax) {
    var s = bests.slice().sort(function (a, b) { return a - b; });
    var k = s.length, d = 'M' + sx(0) + ',' + sy(k / n);
    for (var i = 0; i < k; ++i) d += 'H' + sx(Math.min(s[i], xmax)) + 'V' + sy((k - i - 1) / n);
    return d + 'H' + sx(xmax);
  }
  var rules = [['best_target', null, 'Fast^Inst_p'], ['best', '6 4', 'Fast_p'], ['best_strict', '1 3', 'Fast^Inst_p (strict rule)']];
  var drawn = 0;
  // One chart: the groups of one model x GPU at budget index bi.
  function chart(parent, title, groups, bi, intervals) {
    var T = data.budgets[bi], W = 440, H = 270, L = 44, R = 10, TP = 8, B = 38;
    var maxb = 0;
    groups.forEach(function (g) {
      var b = g.budgets[bi];
      if (b.measured) b.best.concat(b.best_target, b.best_strict).forEach(function (x) { maxb = Math.max(maxb, x); });
    });
    var xmax = Math.max(2, Math.ceil(maxb * 1.1 * 2) / 2);
    var sx = function (p) { return (L + (W - L - R) * p / xmax).toFixed(2); };
    var sy = function (f) { return (TP + (H - TP - B) * (1 - f)).toFixed(2); };
    var box = tag('div', {'class': 'chart'}, parent);
    tag('div', {'class': 'chart-title'}, box, title + ' \u00b7 T = ' + T);
    var s = svg('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'class': 'fastp-chart', 'data-budget': T}, box);
    svg('line', {x1: L, y1: sy(0), x2: W - R, y2: sy(0), stroke: '#444'}, s);
    svg('line', {x1: L, y1: sy(0), x2: L, y2: sy(1), stroke: '#444'}, s);
    var step = xmax <= 3 ? 0.5 : xmax <= 10 ? 1 : Math.ceil(xmax / 10);
    for (var p = 0; p <= xmax + 1e-9; p += step) {
      svg('line', {x1: sx(p), y1: sy(0), x2: sx(p), y2: sy(1), stroke: '#eee'}, s);
      var t = svg('text', {x: sx(p), y: H - B + 15, 'font-size': 11, 'text-anchor': 'middle'}, s);
      t.textContent = (Math.round(p * 100) / 100).toString();
    }
    [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
      svg('line', {x1: L, y1: sy(f), x2: W - R, y2: sy(f), stroke: '#eee'}, s);
      var t = svg('text', {x: L - 6, y: +sy(f) + 4, 'font-size': 11, 'text-anchor': 'end'}, s);
      t.textContent = Math.round(f * 100) + '%';
    });
    var xl = svg('text', {x: (L + W - R) / 2, y: H - 6, 'font-size': 12, 'text-anchor': 'middle'}, s);
    xl.textContent = 'p (speedup threshold, strict >)';
    svg('line', {x1: sx(1), y1: sy(0), x2: sx(1), y2: sy(1), stroke: '#999', 'stroke-dasharray': '2 3'}, s);
    var legend = tag('div', {'class': 'legend'}, box);
    groups.forEach(function (g, i) {
      var b = g.budgets[bi], c = colour(i);
      var item = tag('span', {}, legend);
      tag('span', {'class': 'swatch curve-swatch', style: 'background:' + c}, item);
      item.appendChild(document.createTextNode(g.label));
      if (!b.measured || b.n === 0) return;
      rules.forEach(function (v) {
        if (v[0] === 'best_strict' && !b.strict_known) return;
        var path = svg('path', {d: stepPath(b[v[0]], b.n, sx, sy, xmax), fill: 'none', stroke: c, 'stroke-width': 2,
                                'class': 'fastp-curve', 'data-group': g.label, 'data-rule': v[0]}, s);
        if (v[1]) path.setAttribute('stroke-dasharray', v[1]);
        var tt = svg('title', {}, path);
        tt.textContent = g.model + ' \u00b7 ' + g.label + ' - ' + v[2] + ' at T = ' + T + ' (' + b.n + ' trajectories)';
        ++drawn;
      });
      if (!intervals) return;
      b.grid.forEach(function (p, j) {
        var lo = b.lower[j], hi = b.upper[j];
        if (lo === null || hi === null || p > xmax) return;
        svg('line', {x1: sx(p), y1: sy(lo), x2: sx(p), y2: sy(hi), stroke: c, 'stroke-width': 1.5, opacity: 0.55,
                     'class': 'fastp-interval'}, s);
      });
    });
  }
  var groups = data.groups;
  var charts = [];  // one per model x GPU, in the order first seen
  groups.forEach(function (g) {
    var key = g.model + '\n' + g.gpu, c = charts.filter(function (x) { return x.key === key; })[0];
    if (!c) charts.push(c = {key: key, title: g.model + ' \u00b7 ' + g.gpu, groups: []});
    c.groups.push(g);
  });
  var defs = [];
  groups.forEach(function (g) { if (defs.indexOf(g.definition) < 0) defs.push(g.definition); });
  var controls = document.getElementById('fastp-controls');
  var modelSel = tag('select', {id: 'fastp-model'}, tag('label', {}, controls, 'Model'));
  tag('option', {value: ''}, modelSel, 'every model (one chart each)');
  charts.forEach(function (c, i) { tag('option', {value: String(i)}, modelSel, c.title); });
  var budgetSel = tag('select', {id: 'fastp-budget'}, tag('label', {}, controls, 'Turn budget'));
  var lastMeasured = 0;
  data.budgets.forEach(function (T, bi) {
    tag('option', {value: String(bi)}, budgetSel, 'T = ' + T);
    if (groups.some(function (g) { return g.budgets[bi].measured; })) lastMeasured = bi;
  });
  budgetSel.value = String(lastMeasured);
  var defSel = tag('select', {id: 'fastp-select'}, tag('label', {}, controls, 'Definition'));
  tag('option', {value: ''}, defSel, 'every definition');
  defs.forEach(function (d) { tag('option', {value: d}, defSel, d); });
  var ivLabel = tag('label', {}, controls);
  var ivBox = tag('input', {type: 'checkbox', id: 'fastp-intervals'}, ivLabel);
  ivBox.checked = true;
  ivLabel.appendChild(document.createTextNode(' ' + data.confidence_percent + '% intervals (Fast^Inst_p)'));
  var area = document.getElementById('fastp-charts');
  function draw() {
    area.textContent = '';
    drawn = 0;
    var bi = +budgetSel.value, shown = 0;
    charts.forEach(function (c, i) {
      if (modelSel.value !== '' && +modelSel.value !== i) return;
      var chosen = c.groups.filter(function (g) { return !defSel.value || g.definition === defSel.value; });
      if (!chosen.length) return;
      chart(area, c.title, chosen, bi, ivBox.checked);
      ++shown;
    });
    var ready = document.getElementById('fastp-ready');
    ready.setAttribute('data-curves', drawn);
    ready.setAttribute('data-charts', shown);
    ready.textContent = drawn + ' curves in ' + shown + ' charts.';
  }
  [modelSel, budgetSel, defSel, ivBox].forEach(function (n) { n.addEventListener('change', draw); });
  draw();
  // What the first screen holds, for the rendering test: the page's width against the window's, and
  // where the first chart sits.
  var check = document.getElementById('layout-check'), first = document.querySelector('.fastp-chart');
  check.setAttribute('data-scroll-width', document.documentElement.scrollWidth);
  check.setAttribute('data-client-width', document.documentElement.clientWidth);
  check.setAttribute('data-viewport-height', window.innerHeight);
  if (first) {
    var box = first.getBoundingClientRect();
    check.setAttribute('data-first-chart-top', Math.round(box.top));
    check.setAttribute('data-first-chart-bottom', Math.round(box.bottom));
  }
  var tools = document.getElementById('drill-controls');
  [['Expand all', true], ['Collapse all', false]].forEach(function (b) {
    var btn = tag('button', {type: 'button'}, tools, b[0]);
    btn.addEventListener('click', function () {
      document.querySelectorAll('#trajectories details').forEach(function (d) { d.open = b[1]; });
    });
  });
})();
