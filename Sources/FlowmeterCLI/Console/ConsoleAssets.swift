/// The console's style sheet and its one script, served from the console itself (the page policy allows nothing
/// else).
enum ConsoleAssets {
    /// Light and dark (`prefers-color-scheme`) colours with WCAG AA contrast; one column under 700 px.
    static let css = """
        :root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #57606a; --line: #d0d7de;
          --accent: #0b57d0; --card: #f6f8fa; --bad: #b42318; --warn: #7a4b00; --ok: #1a7f37; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9da7b3; --line: #30363d; --accent: #79b8ff;
            --card: #161b22; --bad: #ff8182; --warn: #e3b341; --ok: #56d364; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--fg);
          font: 15px/1.5 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
        a { color: var(--accent); }
        a:focus-visible, button:focus-visible, input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        .skip { position: absolute; left: -9999px; }
        .skip:focus { left: 8px; top: 8px; background: var(--bg); padding: 4px 8px; z-index: 2; }
        header.top { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 8px;
          padding: 8px 24px; border-bottom: 1px solid var(--line); background: var(--card); }
        header.top nav { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; }
        header.top nav a { text-decoration: none; padding: 4px 2px; }
        header.top nav a[aria-current="page"] { font-weight: 600; border-bottom: 2px solid var(--accent); }
        .brand { font-weight: 700; margin-right: 8px; }
        main { max-width: 1200px; margin: 0 auto; padding: 16px 24px 48px; }
        h1 { font-size: 1.6rem; margin: 8px 0 12px; overflow-wrap: anywhere; }
        h2 { font-size: 1.2rem; margin: 24px 0 8px; }
        .count { color: var(--muted); font-weight: 400; }
        nav.windows { margin: 4px 0 8px; }
        nav.windows a { margin-left: 6px; }
        nav.windows a[aria-current="true"] { font-weight: 700; }
        form.filters { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: end; margin-bottom: 12px; }
        form.filters label { display: flex; flex-direction: column; font-size: 0.85rem; color: var(--muted); }
        input, button { font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--muted);
          border-radius: 4px; padding: 4px 8px; max-width: 100%; }
        button { cursor: pointer; background: var(--card); }
        .table-scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-size: 0.92rem; }
        th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { color: var(--muted); font-weight: 600; }
        .status { font-weight: 600; }
        .status-new { color: var(--warn); }
        .status-ongoing { color: var(--bad); }
        .status-regressed { color: var(--bad); }
        .empty, .freshness, .why, figcaption { color: var(--muted); }
        .error { color: var(--bad); font-weight: 600; }
        .chart-card { margin: 12px 0; padding: 12px; background: #ffffff; color: #1f2328; border: 1px solid var(--line);
          border-radius: 6px; }
        .chart-card svg { display: block; max-width: 760px; height: auto; }
        .chart-card figcaption { color: #57606a; font-size: 0.85rem; }
        .chart-grid { stroke: #d8dee4; stroke-width: 1; }
        .chart-axis, .chart-label { fill: #57606a; }
        .chart-baseline { stroke: #57606a; }
        .chart-deploy line { stroke: #0b57d0; }
        .chart-deploy text { fill: #0b57d0; }
        .chart-onset { stroke: #b42318; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; }
        dl.facts dt { color: var(--muted); }
        dl.facts dd { margin: 0; overflow-wrap: anywhere; }
        ol.timeline { list-style: none; padding: 0; border-left: 2px solid var(--line); }
        ol.timeline li.deploy { margin: 0 0 16px; padding-left: 16px; }
        ol.timeline h2 { margin: 0; font-size: 1.05rem; }
        ol.timeline li:target { background: var(--card); outline: 2px solid var(--accent); }
        code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.88em; overflow-wrap: anywhere; }
        .cli { margin-top: 24px; color: var(--muted); }
        .refresh { color: var(--muted); font-size: 0.85rem; margin: 0 0 4px; }
        .refresh button { padding: 0 6px; font-size: 0.85rem; }
        .sign-in { max-width: 420px; }
        .sign-in form { display: flex; flex-direction: column; gap: 8px; }
        form.sign-out button { padding: 2px 10px; }
        @media (max-width: 700px) {
          header.top, main { padding-left: 12px; padding-right: 12px; }
          dl.facts { grid-template-columns: 1fr; }
          dl.facts dd { margin-bottom: 6px; }
          form.filters label { flex: 1 1 40%; }
        }

        """

    /// Keyboard shortcuts (`n` Now, `d` Deploys, `g` Gates, `m` Manifests, `r` Reports, not while typing), and the
    /// Now page's reload every minute, which its button pauses and resumes.
    static let javascript = """
        "use strict";
        (function () {
          var seconds = Number(document.body && document.body.getAttribute("data-refresh"));
          var button = document.getElementById("refresh-toggle");
          if (!seconds || !button) { return; }
          var timer = null;
          function start() { timer = window.setTimeout(function () { window.location.reload(); }, seconds * 1000); }
          button.hidden = false;
          button.addEventListener("click", function () {
            if (timer === null) { start(); button.textContent = "pause"; }
            else { window.clearTimeout(timer); timer = null; button.textContent = "resume"; }
          });
          start();
        })();
        document.addEventListener("keydown", function (event) {
          if (event.altKey || event.ctrlKey || event.metaKey) { return; }
          var target = event.target;
          if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable)) { return; }
          var paths = { n: "/console/", d: "/console/deploys", g: "/console/gates", m: "/console/manifests", r: "/console/reports" };
          var path = paths[event.key];
          if (path) { window.location.assign(path + window.location.search); }
        });

        """
}
