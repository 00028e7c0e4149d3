/// The login page: a form of `name` and `password`, POSTed to `/login`.
enum LoginPage {
    static func render(problem: String? = nil, name: String = "") -> String {
        var body = "<form method=\"post\" action=\"/login\" class=\"login\">"
        body += "<label for=\"name\">Name</label><input id=\"name\" name=\"name\" autocomplete=\"username\" required"
        body += " value=\"\(Markup.escape(name))\">"
        body += "<label for=\"password\">Password</label>"
        body += "<input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required>"
        body += "<button type=\"submit\" data-act=\"login\">Log in</button></form>\n"
        return Markup.page(title: "Log in", user: nil, problem: problem, body: body)
    }
}
