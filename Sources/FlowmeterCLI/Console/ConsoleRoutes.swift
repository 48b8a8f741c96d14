import Collector
import Detector
import Foundation
import HTTPServer

/// The web console under `/console/` (docs/api.md#reading): server-rendered pages over the read API's queries, signed in
/// with a read key once.
///
/// Signing in posts the key in a form; the server checks it, keeps only what it may read against a random session
/// id, and sets that id in an `HttpOnly`, `SameSite=Strict` cookie (`Secure` when the request came over TLS, as
/// `X-Forwarded-Proto: https` says behind a proxy). The key is in no URL, cookie or log. The two POSTs (sign-in,
/// sign-out) answer 403 when `Origin` (or, without it, `Sec-Fetch-Site`) names another site; every other route only
/// reads. Every page carries a `Content-Security-Policy` that allows scripts and styles from the console itself
/// only.
struct ConsoleRoutes: Sendable {
    let service: ReadService
    let sessions: ConsoleSessions
    let owners: OwnerRules?

    /// The cookie holding the session id.
    static let cookie = "flowmeter_console"
    /// The policy of every console page.
    static let policy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        + "frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    /// The policy of a weekly report page: its own inline styles, no script at all.
    static let reportPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; "
        + "form-action 'none'"

    /// The routes.
    var routes: [HTTPRoute] {
        var routes = [
            HTTPRoute(.get, "/console") { _, responder in responder.respond(Self.redirect("/console/")) },
            HTTPRoute(.get, "/console/sign-in") { request, responder in
                responder.respond(Self.signInPage(next: request.queryValue("next"), message: nil, status: .ok))
            },
            HTTPRoute(.post, "/console/sign-in") { request, responder in responder.respond(signIn(request)) },
            HTTPRoute(.post, "/console/sign-out") { request, responder in responder.respond(signOut(request)) },
            HTTPRoute(.get, "/console/console.css") { _, responder in
                responder.respond(Self.asset(ConsoleAssets.css, type: "text/css; charset=utf-8"))
            },
            HTTPRoute(.get, "/console/console.js") { _, responder in
                responder.respond(Self.asset(ConsoleAssets.javascript, type: "text/javascript; charset=utf-8"))
            },
        ]
        let pages: [(String, String)] = [
            ("/console/", "now"), ("/console/incident", "incident"), ("/console/type", "type"),
            ("/console/deploys", "deploys"), ("/console/gates", "gates"), ("/console/manifests", "manifests"),
            ("/console/reports", "reports"), ("/console/report", "report"),
        ]
        for (path, page) in pages {
            routes.append(HTTPRoute(.get, path) { request, responder in handle(page, request, responder) })
        }
        return routes
    }

    private func handle(_ page: String, _ request: HTTPRequest, _ responder: HTTPResponder) {
        guard let access = sessions.access(Self.cookieValue(request.headers["Cookie"])) else {
            let next = request.path + Self.rawQuery(request)
            responder.respond(Self.redirect("/console/sign-in?next=" + ConsoleFilters.percentEncoded(next)))
            return
        }
        let filters = ConsoleFilters(request)
        let views = ConsoleViews(
            data: ConsoleData(service: service, access: access), storeURL: service.queries.storeURL, owners: owners)
        service.respond(responder, busy: Self.busyPage) {
            do throws(ConsoleData.Failure) {
                switch page {
                case "now":
                    let content = try await views.now(filters)
                    return Self.page(
                        ConsolePage(title: "Now", section: "now", filters: filters, content: content, refreshes: true))
                case "incident":
                    let (title, content) = try await views.incident(
                        filters, kind: request.queryValue("kind") ?? "", type: request.queryValue("type") ?? "",
                        onset: request.queryValue("onset"))
                    return Self.page(ConsolePage(title: title, section: "now", filters: filters, content: content))
                case "type":
                    let type = request.queryValue("type") ?? ""
                    let content = try await views.type(filters, type: type)
                    return Self.page(
                        ConsolePage(
                            title: type.isEmpty ? "(no type)" : type, section: "now", filters: filters, content: content
                        ))
                case "deploys":
                    let content = try await views.deploys(filters)
                    return Self.page(
                        ConsolePage(title: "Deploys", section: "deploys", filters: filters, content: content))
                case "gates":
                    let content = try await views.gates(filters)
                    return Self.page(ConsolePage(title: "Gates", section: "gates", filters: filters, content: content))
                case "manifests":
                    let content = try await views.manifests(filters)
                    return Self.page(
                        ConsolePage(title: "Manifests", section: "manifests", filters: filters, content: content))
                case "reports":
                    return Self.page(
                        ConsolePage(
                            title: "Weekly reports", section: "reports", filters: filters,
                            content: views.reports(filters), showsFilters: false))
                default:
                    var parameters: [(name: String, value: String?)] = [(name: "format", value: "html")]
                    if let week = request.queryValue("week") { parameters.append((name: "week", value: week)) }
                    if let app = filters.app { parameters.append((name: "app", value: app)) }
                    let html = try await views.data.text("report", parameters)
                    var response = HTTPResponse(
                        status: .ok, headers: ["Content-Type": "text/html; charset=utf-8"], body: Array(html.utf8))
                    Self.secure(&response, policy: Self.reportPolicy)
                    return response
                }
            } catch {
                let content = "<p class=\"error\" role=\"alert\">\(HTMLEscaping.escape(error.message))</p>\n"
                return Self.page(
                    ConsolePage(title: "Cannot show this view", section: page, filters: filters, content: content),
                    status: HTTPStatus(error.status))
            }
        }
    }

    private func signIn(_ request: HTTPRequest) -> HTTPResponse {
        guard Self.isSameOrigin(request) else { return Self.crossSite }
        let form = Self.formValues(request.body)
        let next = Self.safeNext(form["next"])
        let access = service.keys.readAccess(token: form["key"].flatMap { $0.isEmpty ? nil : $0 })
        guard access.isAuthenticated else {
            return Self.signInPage(next: next, message: "That key may read nothing here.", status: .unauthorized)
        }
        let id = sessions.start(access)
        var response = Self.redirect(next)
        response.headers.add(
            name: "Set-Cookie",
            value: "\(Self.cookie)=\(id); Path=/console; Max-Age=\(sessions.maxAge); HttpOnly; SameSite=Strict"
                + (Self.isTLS(request) ? "; Secure" : ""))
        return response
    }

    private func signOut(_ request: HTTPRequest) -> HTTPResponse {
        guard Self.isSameOrigin(request) else { return Self.crossSite }
        sessions.end(Self.cookieValue(request.headers["Cookie"]))
        var response = Self.redirect("/console/sign-in")
        response.headers.add(
            name: "Set-Cookie",
            value: "\(Self.cookie)=; Path=/console; Max-Age=0; HttpOnly; SameSite=Strict"
                + (Self.isTLS(request) ? "; Secure" : ""))
        return response
    }

    // MARK: HTTP pieces

    static func page(_ page: ConsolePage, status: HTTPStatus = .ok) -> HTTPResponse {
        var response = HTTPResponse(
            status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: Array(page.html.utf8))
        secure(&response, policy: policy)
        return response
    }

    /// Adds the console's security headers. `Referrer-Policy: same-origin` rather than `no-referrer`: with the
    /// latter, browsers send `Origin: null` on the console's own form posts, which the origin check must refuse.
    static func secure(_ response: inout HTTPResponse, policy: String) {
        response.headers.replaceOrAdd(name: "Content-Security-Policy", value: policy)
        response.headers.replaceOrAdd(name: "X-Frame-Options", value: "DENY")
        response.headers.replaceOrAdd(name: "Referrer-Policy", value: "same-origin")
    }

    static func redirect(_ location: String) -> HTTPResponse {
        var response = HTTPResponse(status: HTTPStatus(303), headers: ["Location": location])
        secure(&response, policy: policy)
        return response
    }

    static func asset(_ text: String, type: String) -> HTTPResponse {
        var response = HTTPResponse(
            status: .ok, headers: ["Content-Type": type, "Cache-Control": "max-age=300"], body: Array(text.utf8))
        secure(&response, policy: policy)
        return response
    }

    static let busyPage: HTTPResponse = {
        var response = HTTPResponse(
            status: .serviceUnavailable,
            headers: ["Content-Type": "text/plain; charset=utf-8", "Retry-After": "1"],
            body: Array("The console is busy; reload in a moment.\n".utf8))
        secure(&response, policy: policy)
        return response
    }()

    static let crossSite = HTTPResponse.error(
        status: .forbidden, code: "forbidden", message: "Cross-site form posts are refused.")

    static func signInPage(next: String?, message: String?, status: HTTPStatus) -> HTTPResponse {
        let e = HTMLEscaping.escape
        var html = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Sign in · Flowmeter</title>
            <link rel="stylesheet" href="/console/console.css">
            </head>
            <body>
            <main id="main" class="sign-in">
            <h1>Flowmeter console</h1>
            <p>Sign in with a read key. The key is checked once and kept nowhere: the console remembers only what it may
            read, for 12 hours or until you sign out.</p>

            """
        if let message { html += "<p class=\"error\" role=\"alert\" id=\"sign-in-error\">\(e(message))</p>\n" }
        html += """
            <form method="post" action="/console/sign-in">
            <input type="hidden" name="next" value="\(e(safeNext(next)))">
            <label for="key">Read key</label>
            <input type="password" id="key" name="key" autocomplete="current-password" required>
            <button type="submit" id="sign-in">Sign in</button>
            </form>
            </main>
            </body>
            </html>

            """
        var response = HTTPResponse(
            status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: Array(html.utf8))
        secure(&response, policy: policy)
        return response
    }

    /// Where to go after signing in: a console path, never another site.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/console/"), !next.hasPrefix("//"), !next.contains("\\") else {
            return "/console/"
        }
        return next
    }

    /// Whether a POST came from the console's own pages: `Origin` names this host, or, without `Origin`,
    /// `Sec-Fetch-Site` says same-origin (or is absent: a client that sends neither is no browser).
    static func isSameOrigin(_ request: HTTPRequest) -> Bool {
        if let origin = request.headers["Origin"] {
            guard let host = request.headers["Host"] else { return false }
            return origin == "http://\(host)" || origin == "https://\(host)"
        }
        if let site = request.headers["Sec-Fetch-Site"] { return site == "same-origin" || site == "none" }
        return true
    }

    static func isTLS(_ request: HTTPRequest) -> Bool {
        request.headers["X-Forwarded-Proto"]?.lowercased() == "https"
    }

    static func cookieValue(_ header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.trimmingCharacters(in: .whitespaces)
            if pair.hasPrefix(cookie + "=") { return String(pair.dropFirst(cookie.count + 1)) }
        }
        return nil
    }

    /// The query of `request` as it would appear after `?` (rebuilt from its decoded items).
    static func rawQuery(_ request: HTTPRequest) -> String {
        guard !request.queryItems.isEmpty else { return "" }
        return "?"
            + request.queryItems.map { item in
                ConsoleFilters.percentEncoded(item.name)
                    + (item.value.map { "=" + ConsoleFilters.percentEncoded($0) } ?? "")
            }.joined(separator: "&")
    }

    /// The fields of an `application/x-www-form-urlencoded` body.
    static func formValues(_ body: [UInt8]) -> [String: String] {
        var values: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            values[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return values
    }
}
