/// One console page as HTML: the shared layout (navigation, filters, sign-out) around a page's content.
struct ConsolePage {
    /// The page's title, also its `<h1>`.
    var title: String
    /// Which navigation entry is current (`now`, `deploys`, …).
    var section: String
    /// The filters the page was asked with; every link carries them.
    var filters: ConsoleFilters
    /// The page's own HTML, already escaped.
    var content: String
    /// Whether the page reloads itself every minute (the Now page), through the console's script and with a control
    /// to pause it: a `<meta http-equiv="refresh">` cannot be paused, which WCAG 2.2.1 (and axe-core, as critical)
    /// refuses.
    var refreshes = false
    /// Whether the filter form is shown.
    var showsFilters = true

    /// The navigation entries: section, path, label, access key.
    static let sections: [(section: String, path: String, label: String)] = [
        ("now", "/console/", "Now"), ("deploys", "/console/deploys", "Deploys"), ("gates", "/console/gates", "Gates"),
        ("manifests", "/console/manifests", "Manifests"), ("reports", "/console/reports", "Reports"),
    ]

    /// The whole document.
    var html: String {
        let e = HTMLEscaping.escape
        var page = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">

            """
        page += """
            <title>\(e(title)) · Flowmeter</title>
            <link rel="stylesheet" href="/console/console.css">
            <script src="/console/console.js" defer></script>
            </head>

            """
        page += refreshes ? "<body data-refresh=\"60\">\n" : "<body>\n"
        page += """
            <a class="skip" href="#main">Skip to the content</a>
            <header class="top">
            <nav aria-label="Console">
            <span class="brand">Flowmeter</span>

            """
        for entry in Self.sections {
            let current = entry.section == section ? " aria-current=\"page\"" : ""
            page += "<a href=\"\(e(entry.path + filters.query()))\"\(current)>\(e(entry.label))</a>\n"
        }
        page += """
            </nav>
            <form method="post" action="/console/sign-out" class="sign-out"><button type="submit">Sign out</button></form>
            </header>
            <main id="main">
            <h1>\(e(title))</h1>

            """
        if refreshes {
            page += "<p class=\"refresh\" id=\"refresh\">Reloads every minute with scripts on "
            page += "(<button type=\"button\" id=\"refresh-toggle\" hidden>pause</button>); reload the page for "
            page += "fresh data otherwise.</p>\n"
        }
        if showsFilters { page += filterForm }
        page += content
        page += "\n</main>\n</body>\n</html>\n"
        return page
    }

    /// The window links (each a look-back, dropping from/to) and the filter form: a GET form, so the filtered view
    /// is a URL.
    private var filterForm: String {
        let e = HTMLEscaping.escape
        var form = "<nav class=\"windows\" aria-label=\"Window\">Window:"
        let current = filters.from == nil ? (filters.since ?? "24h") : ""
        for preset in ["1h", "6h", "24h", "7d", "30d"] {
            var link = filters
            link.since = preset
            link.from = nil
            link.to = nil
            let mark = preset == current ? " aria-current=\"true\"" : ""
            form += " <a href=\"\(e(link.query()))\" id=\"window-\(preset)\"\(mark)>\(preset)</a>"
        }
        form += "</nav>\n<form method=\"get\" class=\"filters\" aria-label=\"Filters\">\n"
        if filters.from == nil, let since = filters.since {
            form += "<input type=\"hidden\" name=\"since\" value=\"\(e(since))\">\n"
        }
        form += "<label>From <input name=\"from\" id=\"filter-from\" value=\"\(e(filters.from ?? ""))\" "
        form += "placeholder=\"YYYY-MM-DDThh:mm:ssZ\" size=\"20\"></label>\n"
        form += "<label>To <input name=\"to\" id=\"filter-to\" value=\"\(e(filters.to ?? ""))\" placeholder=\"now\" "
        form += "size=\"20\"></label>\n"
        form +=
            "<label>App <input name=\"app\" id=\"filter-app\" value=\"\(e(filters.app ?? ""))\" size=\"18\"></label>\n"
        form += "<label>Team <input name=\"team\" id=\"filter-team\" value=\"\(e(filters.team ?? ""))\" size=\"10\">"
        form += "</label>\n<button type=\"submit\" id=\"filter-apply\">Apply</button>\n</form>\n"
        return form
    }
}
