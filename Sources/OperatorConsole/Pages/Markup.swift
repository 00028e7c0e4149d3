import FleetPage

/// The console's HTML: escaping and the frame of every page. No page carries a script,
/// an inline style or an inline event handler: the Content-Security-Policy
/// (``SecurityHeaders``) forbids them, so a string that slipped through unescaped still
/// could not run.
enum Markup {
    /// `text` safe in an element and in a quoted attribute value (the fleet page's escaper).
    static func escape(_ text: String) -> String { HTMLText.escape(text) }

    /// A whole page: `title`, the signed-in bar (nil: none, the login page), a one-line
    /// `notice` or `problem`, and `body`.
    static func page(title: String, user: SignedIn?, notice: String? = nil, problem: String? = nil, body: String) -> String {
        var out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        out += "<meta name=\"viewport\" content=\"width=device-width\">"
        out += "<title>\(escape(title)) — clientctl console</title><link rel=\"stylesheet\" href=\"/console.css\"></head><body>\n"
        if let user {
            out += "<nav><a href=\"/\">Channels</a> <a href=\"/devices\">Pending devices</a> <a href=\"/audit\">Audit trail</a>"
            out += "<span class=\"who\">\(escape(user.name)) (<span data-field=\"role\">\(user.roleName)</span>)</span>"
            out += "<form method=\"post\" action=\"/logout\" class=\"inline\">\(csrfField(user))"
            out += "<button type=\"submit\" data-act=\"logout\">Log out</button></form></nav>\n"
        }
        out += "<main><h1>\(escape(title))</h1>\n"
        if let notice { out += "<p class=\"notice\" id=\"notice\">\(escape(notice))</p>\n" }
        if let problem { out += "<p class=\"problem\" id=\"problem\">\(escape(problem))</p>\n" }
        out += body
        out += "</main></body></html>\n"
        return out
    }

    /// The hidden CSRF field of every form of a signed-in operator.
    static func csrfField(_ user: SignedIn) -> String {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(escape(user.csrf))\">"
    }

    /// A form that POSTs one act: hidden `fields`, the CSRF field and a submit button
    /// carrying `data-act` and the `data` attributes naming its target.
    static func actForm(
        _ act: String, user: SignedIn, fields: [(String, String)], data: [(String, String)], label: String, extra: String = ""
    ) -> String {
        var out = "<form method=\"post\" action=\"/act/\(act)\" class=\"act\">\(csrfField(user))"
        for (name, value) in fields { out += "<input type=\"hidden\" name=\"\(name)\" value=\"\(escape(value))\">" }
        out += extra
        out += "<button type=\"submit\" data-act=\"\(act)\""
        for (name, value) in data { out += " data-\(name)=\"\(escape(value))\"" }
        return out + ">\(escape(label))</button></form>"
    }
}
