// The goshelter status page: reads Storm UI's REST API and goshelter's graph
// from the same handler, and draws them. Plain DOM and SVG, no libraries, no
// network beyond the handler. Every text from the server goes in through
// textContent or an attribute, never as HTML: error messages carry data.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const SVG = 'http://www.w3.org/2000/svg';
  const state = { id: null, component: null, comp: null, timer: null, renders: 0, busy: false, outside: new Set() };

  // --- formatting -----------------------------------------------------------

  const count = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '');
  function rate(perSec) {
    if (!(perSec > 0)) return '0/s';
    if (perSec >= 1e6) return (perSec / 1e6).toFixed(1) + 'M/s';
    if (perSec >= 1e4) return (perSec / 1e3).toFixed(1) + 'k/s';
    if (perSec >= 10) return perSec.toFixed(0) + '/s';
    return perSec.toFixed(1) + '/s';
  }
  function ms(v) {
    if (!(v > 0)) return '0 ms';
    if (v >= 100) return v.toFixed(0) + ' ms';
    if (v >= 1) return v.toFixed(1) + ' ms';
    return (v * 1000).toFixed(0) + ' µs';
  }
  function ago(unixSecs, nowSecs) {
    if (unixSecs == null) return '';
    const s = Math.max(0, Math.round(nowSecs - unixSecs));
    if (s < 60) return s + 's ago';
    if (s < 3600) return Math.floor(s / 60) + 'm ' + (s % 60) + 's ago';
    if (s < 86400) return Math.floor(s / 3600) + 'h ' + Math.floor((s % 3600) / 60) + 'm ago';
    return Math.floor(s / 86400) + 'd ago';
  }
  const clock = (date) => date.toLocaleTimeString('en-GB');
  // Storm's windows (the REST API's window=), by the names the page uses.
  const WINDOWS = { '600': 'Last 10 minutes', '10800': 'Last 3 hours', '86400': 'Last day', ':all-time': 'All time' };
  function windowLabel(w) {
    const name = WINDOWS[w.window] || w.window;
    // A window of fixed length covers a little more while watched, or less
    // (or more) when nobody asked for a while: say what the figures cover.
    return w.window === ':all-time' || w.windowPretty === lengthPretty(w.window) ? name : name + ' (covers ' + w.windowPretty + ')';
  }
  function lengthPretty(window) {
    return { '600': '10m 0s', '10800': '3h 0m 0s', '86400': '1d 0h 0m 0s' }[window];
  }
  function size(bytes) {
    if (!(bytes > 0)) return '0 B';
    if (bytes >= 1 << 30) return (bytes / (1 << 30)).toFixed(1) + ' GiB';
    if (bytes >= 1 << 20) return (bytes / (1 << 20)).toFixed(1) + ' MiB';
    if (bytes >= 1 << 10) return (bytes / (1 << 10)).toFixed(1) + ' KiB';
    return bytes + ' B';
  }

  // --- DOM helpers ----------------------------------------------------------

  // checkpointCells are the last committed checkpoint of a component or a
  // task (goshelter's checkpointId, checkpointMs, checkpointBytes), in cells
  // the style sheet shows for a topology with state only (body.stateful).
  function checkpointCells(c) {
    return [
      cell(c.checkpointId ? count(c.checkpointId) : '', { cls: 'ckpt', field: 'checkpointId' }),
      cell(c.checkpointId ? c.checkpointMs : '', { cls: 'ckpt', field: 'checkpointMs' }),
      cell(c.checkpointId ? size(c.checkpointBytes) : '', { cls: 'ckpt', field: 'checkpointBytes', title: count(c.checkpointBytes) + ' bytes' }),
    ];
  }

  // cell makes a td; opts: {cls, title, field}.
  function cell(text, opts) {
    const td = document.createElement('td');
    td.textContent = text == null ? '' : String(text);
    if (opts) {
      if (opts.cls) td.className = opts.cls;
      if (opts.title) td.title = opts.title;
      if (opts.field) td.dataset.field = opts.field;
    }
    return td;
  }
  function fill(tbody, rows) {
    const frag = document.createDocumentFragment();
    rows.forEach((r) => frag.appendChild(r));
    tbody.replaceChildren(frag);
  }
  function row(cells, attrs) {
    const tr = document.createElement('tr');
    cells.forEach((c) => tr.appendChild(c));
    if (attrs) Object.keys(attrs).forEach((k) => { tr.dataset[k] = attrs[k]; });
    return tr;
  }
  // empty is a row that says a table has nothing to show.
  function empty(text, columns) {
    const td = cell(text, { cls: 'text muted' });
    td.colSpan = columns;
    return row([td]);
  }
  function link(text, component) {
    const td = document.createElement('td');
    const a = document.createElement('a');
    a.href = '#component=' + encodeURIComponent(component);
    a.textContent = text;
    td.appendChild(a);
    td.dataset.field = 'id';
    return td;
  }
  // outsideBadge marks a spout outside the checkpoint of a topology with
  // state: its messages are at-least-once for the state.
  function outsideBadge() {
    const b = document.createElement('span');
    b.className = 'badge outside';
    b.dataset.field = 'outsideCheckpoint';
    b.textContent = 'outside checkpoint';
    b.title = 'declared dsl.OutsideCheckpoint(): its source is not rewound to the checkpoints, so its messages are at-least-once for the state';
    return b;
  }
  function svg(name, attrs, parent) {
    const el = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach((k) => el.setAttribute(k, attrs[k]));
    if (parent) parent.appendChild(el);
    return el;
  }

  // --- fetching -------------------------------------------------------------

  async function getJSON(path) {
    const ctl = new AbortController();
    const t = setTimeout(() => ctl.abort(), 10000);
    try {
      const resp = await fetch(path, { signal: ctl.signal, cache: 'no-store', headers: { Accept: 'application/json' } });
      const body = await resp.json();
      if (!resp.ok) throw new Error(body.errorMessage || resp.statusText);
      return body;
    } finally {
      clearTimeout(t);
    }
  }

  async function refresh() {
    if (state.busy) return;
    state.busy = true;
    try {
      if (state.id == null) {
        const summary = await getJSON('api/v1/topology/summary');
        state.id = summary.topologies[0].id;
      }
      const base = 'api/v1/topology/' + encodeURIComponent(state.id);
      const q = '?window=' + encodeURIComponent($('window').value) + ($('sys').checked ? '&sys=1' : '');
      const wanted = [getJSON(base + q), getJSON(base + '/graph')];
      if (state.component) wanted.push(getJSON(base + '/component/' + encodeURIComponent(state.component) + q));
      const [topo, graph, comp] = await Promise.all(wanted);
      render(topo, graph, comp);
      $('problem').hidden = true;
      state.renders++;
      document.body.dataset.renders = String(state.renders);
    } catch (err) {
      $('problem').textContent = 'Cannot read the topology: ' + err.message + '. The figures below are the last ones read.';
      $('problem').hidden = false;
      const st = $('status');
      st.textContent = 'UNREACHABLE';
      st.className = 'status UNREACHABLE';
    } finally {
      state.busy = false;
    }
  }

  function schedule() {
    clearTimeout(state.timer);
    const every = Number($('refresh').value);
    if (every > 0 && !document.hidden) {
      state.timer = setTimeout(async () => { await refresh(); schedule(); }, every);
    }
  }

  // --- rendering ------------------------------------------------------------

  function render(t, graph, comp) {
    const now = Date.now() / 1000;
    document.title = t.name + ' · goshelter';
    document.body.classList.toggle('stateful', !!t.stateful);
    $('topology-name').textContent = t.name;
    const st = $('status');
    st.textContent = t.status;
    st.className = 'status ' + t.status;
    $('updated').textContent = 'updated ' + clock(new Date());
    document.querySelectorAll('.window-name').forEach((el) => { el.textContent = '(' + t.windowHint + ')'; });

    fill($('summary').tBodies[0], [row([
      cell(t.name, { field: 'name' }), cell(t.status, { field: 'status' }),
      cell(t.uptime, { field: 'uptime', title: t.uptimeSeconds + ' s' }),
      cell(t.incarnation, { field: 'incarnation' }), cell(t.restarts, { field: 'restarts' }),
      cell(t.tasksTotal, { field: 'tasks' }), cell(t.executorsTotal), cell(t.workersTotal),
      cell(count(t.inFlight), { field: 'inFlight' }), cell(t.msgTimeout + ' s'),
    ])]);

    fill($('topology-stats').tBodies[0], t.topologyStats.map((w) => row([
      cell(windowLabel(w), { cls: 'text', title: 'window ' + w.window }),
      cell(count(w.emitted), { field: 'emitted' }), cell(count(w.transferred), { field: 'transferred' }),
      cell(w.completeLatency, { field: 'completeLatency' }), cell(count(w.acked), { field: 'acked' }),
      cell(count(w.failed), { field: 'failed' }),
    ], { window: w.window })));

    fill($('spouts').tBodies[0], t.spouts.map((s) => row([
      spoutID(t, s), cell(s.executors), cell(s.tasks),
      cell(count(s.emitted), { field: 'emitted' }), cell(count(s.transferred), { field: 'transferred' }),
      cell(s.completeLatency, { field: 'completeLatency' }), cell(count(s.acked), { field: 'acked' }),
      cell(count(s.failed), { field: 'failed' }), cell(count(s.pending), { field: 'pending' }),
      ...checkpointCells(s),
      errorCell(s), cell(ago(s.errorTime, now), { field: 'errorTime', title: s.errorTime ? new Date(s.errorTime * 1000).toString() : '' }),
    ], { component: s.spoutId, outsideCheckpoint: String(!!(t.stateful && s.outsideCheckpoint)) })));

    fill($('bolts').tBodies[0], t.bolts.map((b) => row([
      link(b.boltId, b.boltId), cell(b.executors), cell(b.tasks),
      cell(count(b.emitted), { field: 'emitted' }), cell(count(b.transferred), { field: 'transferred' }),
      cell(b.capacity, { field: 'capacity' }), cell(b.executeLatency, { field: 'executeLatency' }),
      cell(count(b.executed), { field: 'executed' }), cell(b.processLatency, { field: 'processLatency' }),
      cell(count(b.acked), { field: 'acked' }), cell(count(b.failed), { field: 'failed' }),
      cell(count(b.mailboxDepth), { field: 'mailboxDepth' }),
      ...checkpointCells(b),
      errorCell(b), cell(ago(b.errorTime, now), { field: 'errorTime', title: b.errorTime ? new Date(b.errorTime * 1000).toString() : '' }),
    ], { component: b.boltId })));
    document.querySelectorAll('#spouts tbody tr, #bolts tbody tr').forEach((tr) => {
      tr.classList.toggle('selected', tr.dataset.component === state.component);
    });

    state.outside = new Set(t.stateful ? t.spouts.filter((s) => s.outsideCheckpoint).map((s) => s.spoutId) : []);
    renderConfiguration(t.configuration || {});

    const events = t.events.slice().reverse();
    fill($('events').tBodies[0], events.length ? events.map((e) => row([
      cell(new Date(e.time).toLocaleString('en-GB')), cell(e.kind, { cls: 'text', field: 'kind' }), cell(e.incarnation),
      cell(e.attempt || ''), cell(e.delaySecs ? e.delaySecs + ' s' : ''), cell(e.error || '', { cls: 'error', title: e.error || '' }),
    ])) : [empty('no events yet', 6)]);

    $('graph-window').textContent = '(rates over the last ' + graph.windowSecs.toFixed(1) + ' s)';
    drawGraph(graph);
    renderComponent(comp, now);
  }

  function spoutID(t, s) {
    const td = link(s.spoutId, s.spoutId);
    if (t.stateful && s.outsideCheckpoint) td.appendChild(outsideBadge());
    return td;
  }

  // renderConfiguration fills Storm UI's configuration table: every key, in
  // order, with its value as JSON writes it (a text as it is).
  function renderConfiguration(conf) {
    const keys = Object.keys(conf).sort();
    fill($('configuration').tBodies[0], keys.length ? keys.map((k) => {
      const v = conf[k];
      const text = typeof v === 'string' ? v : JSON.stringify(v);
      return row([cell(k, { field: 'key' }), cell(text, { cls: 'text', field: 'value' })], { key: k });
    }) : [empty('no configuration', 2)]);
  }

  // metricsText writes a task's metrics (TaskInfo.Metric) as name=value
  // pairs, by name; a value that is not a number or a text as JSON.
  function metricsText(m) {
    return Object.keys(m || {}).sort().map((k) => {
      const v = m[k];
      return k + '=' + (typeof v === 'number' ? count(v) : typeof v === 'string' ? v : JSON.stringify(v));
    }).join(', ');
  }

  function errorCell(c) {
    const text = c.lastError || '';
    const td = cell(text.split('\n')[0], { cls: 'error', field: 'lastError', title: text ? text + (c.errorTask ? '\n(task ' + c.errorTask + ')' : '') : '' });
    return td;
  }

  // --- component detail -----------------------------------------------------

  function renderComponent(c, now) {
    state.comp = c;
    const section = $('component');
    if (!c) {
      section.hidden = true;
      return;
    }
    section.hidden = false;
    $('component-name').textContent = c.id;
    $('component-kind').textContent = c.componentType + ', ' + c.tasks + ' tasks, ' + c.windowHint +
      (state.outside.has(c.id) ? ', outside the checkpoint (at-least-once for the state)' : '');
    fill($('component-errors').tBodies[0], c.componentErrors.length ? c.componentErrors.map((e) => row([
      cell(new Date(e.errorTime).toLocaleString('en-GB'), { title: ago(e.errorTime / 1000, now) }),
      cell(e.errorTask), cell(e.error, { cls: 'wrap error', field: 'error' }),
    ])) : [empty('no errors', 3)]);

    const spout = c.componentType === 'spout';
    const cols = spout
      ? ['Task', 'Emitted', 'Transferred', 'Complete latency (ms)', 'Acked', 'Failed', 'Pending']
      : ['Task', 'Emitted', 'Transferred', 'Capacity', 'Execute latency (ms)', 'Executed', 'Process latency (ms)', 'Acked', 'Failed', 'Mailbox'];
    // The Metrics column shows when a task reported a metric (TaskInfo.Metric).
    const metrics = c.executorStats.some((e) => e.metrics && Object.keys(e.metrics).length > 0);
    cols.push('Checkpoint', 'Checkpoint time (ms)', 'Checkpoint size');
    if (metrics) cols.push('Metrics');
    cols.push('Last error');
    const head = $('executors').tHead.rows[0];
    const shape = c.componentType + (metrics ? '+metrics' : '');
    if (head.dataset.kind !== shape) {
      head.replaceChildren(...cols.map((name) => {
        const th = document.createElement('th');
        th.textContent = name;
        if (name.startsWith('Checkpoint')) th.className = 'ckpt'; // shown with state only
        return th;
      }));
      head.dataset.kind = shape;
    }
    const filter = $('task-filter').value.trim().toLowerCase();
    const rows = [];
    for (const e of c.executorStats) {
      const cells = spout
        ? [cell(e.task), cell(count(e.emitted)), cell(count(e.transferred)), cell(e.completeLatency), cell(count(e.acked)), cell(count(e.failed)), cell(count(e.pending))]
        : [cell(e.task), cell(count(e.emitted)), cell(count(e.transferred)), cell(e.capacity), cell(e.executeLatency), cell(count(e.executed)), cell(e.processLatency), cell(count(e.acked)), cell(count(e.failed)), cell(count(e.mailboxDepth))];
      cells.push(...checkpointCells(e));
      if (metrics) {
        const text = metricsText(e.metrics);
        cells.push(cell(text, { cls: 'metrics', field: 'metrics', title: text }));
      }
      cells.push(cell((e.lastError || '').split('\n')[0], { cls: 'error', title: e.lastError ? e.lastError + '\n' + ago(e.lastErrorTime, now) : '' }));
      const r = row(cells, { task: String(e.task) });
      if (filter && !r.textContent.toLowerCase().includes(filter)) continue;
      rows.push(r);
    }
    fill($('executors').tBodies[0], rows);
    $('task-count').textContent = rows.length + ' of ' + c.executorStats.length + ' shown';
  }

  function route() {
    const m = /^#component=(.+)$/.exec(location.hash);
    state.component = m ? decodeURIComponent(m[1]) : null;
    if (!state.component) $('component').hidden = true;
  }

  // --- graph ----------------------------------------------------------------

  const NODE_W = 190, NODE_H = 62, GAP_X = 150, GAP_Y = 40, PAD = 24;

  // layout places components in layers, left to right: a component's layer is
  // the longest path to it from a spout (cycles are cut after as many rounds as
  // there are components), and within a layer components follow the mean
  // position of their inputs, which keeps crossings few.
  function layout(g) {
    const layer = {};
    g.components.forEach((c) => { layer[c.id] = 0; });
    for (let round = 0; round < g.components.length; round++) {
      let moved = false;
      g.edges.forEach((e) => {
        if (e.from !== e.to && layer[e.to] < layer[e.from] + 1 && layer[e.from] + 1 < g.components.length) {
          layer[e.to] = layer[e.from] + 1;
          moved = true;
        }
      });
      if (!moved) break;
    }
    const layers = [];
    g.components.forEach((c, i) => {
      (layers[layer[c.id]] = layers[layer[c.id]] || []).push({ c: c, order: i });
    });
    const pos = {};
    layers.forEach((nodes, l) => {
      if (l > 0) {
        nodes.forEach((n) => {
          const ins = g.edges.filter((e) => e.to === n.c.id && pos[e.from] && layer[e.from] < l).map((e) => pos[e.from].slot);
          n.order = ins.length ? ins.reduce((a, b) => a + b, 0) / ins.length : n.order;
        });
        nodes.sort((a, b) => a.order - b.order);
      }
      nodes.forEach((n, i) => { pos[n.c.id] = { layer: l, slot: i, count: nodes.length }; });
    });
    const tallest = Math.max(1, ...layers.map((n) => (n ? n.length : 0)));
    const height = PAD * 2 + tallest * NODE_H + (tallest - 1) * GAP_Y;
    Object.keys(pos).forEach((id) => {
      const p = pos[id];
      const column = p.count * NODE_H + (p.count - 1) * GAP_Y;
      p.x = PAD + p.layer * (NODE_W + GAP_X);
      p.y = (height - column) / 2 + p.slot * (NODE_H + GAP_Y);
    });
    return { pos: pos, width: PAD * 2 + layers.length * NODE_W + (layers.length - 1) * GAP_X, height: height };
  }

  function capacityFill(c) {
    const v = Math.min(1, Math.max(0, c || 0));
    return 'hsl(' + Math.round(120 * (1 - v)) + ', 70%, 80%)';
  }

  function drawGraph(g) {
    const box = $('graph');
    if (!g.components.length) {
      box.textContent = 'no components';
      return;
    }
    const l = layout(g);
    const root = svg('svg', { viewBox: '0 0 ' + l.width + ' ' + (l.height + 20), width: l.width, height: l.height + 20, role: 'img' });
    svg('title', {}, root).textContent = 'topology ' + g.topology;
    const defs = svg('defs', {}, root);
    const marker = svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: 'userSpaceOnUse', orient: 'auto' }, defs);
    svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#6b7785' }, marker);

    // Edges between the same pair fan out, so both streams show.
    const seen = {};
    const labels = [];
    g.edges.forEach((e) => {
      const a = l.pos[e.from], b = l.pos[e.to];
      if (!a || !b) return;
      const key = e.from + '\u0000' + e.to;
      const k = (seen[key] = (seen[key] || 0) + 1) - 1;
      const spread = (k % 2 ? -1 : 1) * Math.ceil(k / 2) * 14;
      const group = svg('g', { class: 'edge' + (e.anchored ? '' : ' unanchored'), 'data-from': e.from, 'data-to': e.to }, root);
      let d, lx, ly;
      if (b.layer > a.layer) {
        const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2 + spread, x2 = b.x, y2 = b.y + NODE_H / 2 + spread;
        const mx = (x1 + x2) / 2;
        d = 'M' + x1 + ',' + y1 + ' C' + mx + ',' + y1 + ' ' + mx + ',' + y2 + ' ' + x2 + ',' + y2;
        lx = mx; ly = (y1 + y2) / 2;
      } else { // a loop or an edge back: around below the nodes
        const x1 = a.x + NODE_W / 2 + spread, y1 = a.y + NODE_H, x2 = b.x + NODE_W / 2 + spread, y2 = b.y + NODE_H;
        const low = Math.max(y1, y2) + 30 + Math.abs(spread);
        d = 'M' + x1 + ',' + y1 + ' C' + x1 + ',' + low + ' ' + x2 + ',' + low + ' ' + (x2 + (x1 === x2 ? 20 : 0)) + ',' + y2;
        lx = (x1 + x2) / 2 + (x1 === x2 ? 10 : 0); ly = low - 4;
      }
      const width = 1 + Math.min(5, Math.log10(1 + (e.rate || 0)) * 0.9);
      svg('path', { d: d, 'stroke-width': width.toFixed(2), 'marker-end': 'url(#arrow)' }, group);
      const title = svg('title', {}, group);
      title.textContent = e.from + ' → ' + e.to + ': ' + e.stream + ', ' + e.grouping + (e.anchored ? ', anchored' : ', unanchored') +
        '\n' + count(e.transferred) + ' transferred' + (e.allStreams ? ' (all streams of the pair)' : '');
      labels.push({ group: group, x: lx, y: ly, e: e });
    });
    // Labels go on top of every edge.
    labels.forEach((lb) => {
      const t = svg('g', { class: 'edge label' }, root);
      svg('rect', { x: lb.x - 52, y: lb.y - 15, width: 104, height: 28, rx: 3 }, t);
      const r = svg('text', { x: lb.x, y: lb.y - 2, 'text-anchor': 'middle', class: 'rate', 'data-rate': String(lb.e.rate) }, t);
      r.textContent = rate(lb.e.rate) + (lb.e.allStreams ? '*' : '');
      const s = svg('text', { x: lb.x, y: lb.y + 10, 'text-anchor': 'middle' }, t);
      s.textContent = lb.e.stream + ' · ' + lb.e.grouping;
    });

    g.components.forEach((c) => {
      const p = l.pos[c.id];
      const outside = state.outside.has(c.id);
      const group = svg('g', { class: 'node ' + c.kind + (c.failing ? ' failing' : '') + (outside ? ' outside' : ''), 'data-node': c.id, transform: 'translate(' + p.x + ',' + p.y + ')' }, root);
      const fillColour = c.kind === 'spout' ? '#dbe9f6' : capacityFill(c.capacity);
      svg('rect', { width: NODE_W, height: NODE_H, rx: c.kind === 'spout' ? 2 : 10, fill: fillColour }, group);
      const name = svg('text', { x: 10, y: 18, class: 'title' }, group);
      name.textContent = clip(c.id, 22) + '  ×' + c.parallelism;
      const line1 = svg('text', { x: 10, y: 36 }, group);
      const line2 = svg('text', { x: 10, y: 52 }, group);
      if (c.kind === 'spout') {
        line1.textContent = 'emit ' + rate(c.emitRate) + ', ack ' + rate(c.ackRate);
        line2.textContent = 'complete ' + ms(c.completeLatencyMs) + (c.failRate > 0 ? ', fail ' + rate(c.failRate) : '');
      } else {
        line1.textContent = 'capacity ' + (c.capacity || 0).toFixed(2) + ', ' + rate(c.executeRate);
        line2.textContent = 'execute ' + ms(c.executeLatencyMs) + (c.failRate > 0 ? ', fail ' + rate(c.failRate) : '');
      }
      const tip = svg('title', {}, group);
      tip.textContent = c.id + ' (' + c.kind + ', parallelism ' + c.parallelism + (outside ? ', outside the checkpoint: at-least-once for the state' : '') + ')';
      group.addEventListener('click', () => { location.hash = 'component=' + encodeURIComponent(c.id); });
    });
    box.replaceChildren(root);
  }

  function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + '…' : s; }

  // --- wiring ---------------------------------------------------------------

  function start() {
    route();
    $('controls').addEventListener('submit', (e) => e.preventDefault());
    ['window', 'sys'].forEach((id) => $(id).addEventListener('change', () => { refresh(); }));
    $('refresh').addEventListener('change', schedule);
    $('task-filter').addEventListener('input', () => { renderComponent(state.comp, Date.now() / 1000); });
    $('component-close').addEventListener('click', (e) => { e.preventDefault(); history.replaceState(null, '', location.pathname + location.search); route(); });
    window.addEventListener('hashchange', () => { route(); refresh(); });
    document.addEventListener('visibilitychange', () => { if (!document.hidden) refresh(); schedule(); });
    refresh().then(schedule);
  }

  start();
})();
