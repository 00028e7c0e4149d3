/// `/`: every channel of RELEASES with its release and what holds it back.
enum OverviewPage {
    /// - Parameter pending: the devices waiting for admission (or why the collector did not say).
    static func render(
        channels: [Result<ChannelState, OperatorConsoleError>], names: [String], pending: Result<Int, OperatorConsoleError>, user: SignedIn
    ) -> String {
        var body = ""
        switch pending {
        case .success(let n) where n > 0:
            body += "<p class=\"notice\"><a href=\"/devices\"><span data-field=\"pending\">\(n)</span> device\(n == 1 ? "" : "s") "
            body += "\(n == 1 ? "waits" : "wait") for admission</a>.</p>"
        case .success: break
        case .failure(let error): body += "<p class=\"problem\">\(Markup.escape(error.message))</p>"
        }
        if names.isEmpty { body += "<p class=\"empty\">No channel in RELEASES holds a manifest.json yet.</p>" }
        body += "<table id=\"channels\"><thead><tr><th>Channel</th><th>App</th><th>Release</th><th>State</th></tr></thead><tbody>"
        for (name, result) in zip(names, channels) {
            let link = "<a href=\"/channel/\(Markup.escape(name))\">\(Markup.escape(name))</a>"
            switch result {
            case .success(let state):
                body += "<tr data-channel=\"\(Markup.escape(name))\"><td>\(link)</td><td>\(Markup.escape(state.app))</td>"
                body += "<td data-field=\"version\">\(Markup.escape(state.version.description))</td>"
                body += "<td data-field=\"state\"\(state.halted ? " class=\"halted\"" : "")>\(Markup.escape(state.summary))</td></tr>"
            case .failure(let error):
                body += "<tr data-channel=\"\(Markup.escape(name))\"><td>\(link)</td><td colspan=\"3\" class=\"problem\">"
                body += "\(Markup.escape(error.message))</td></tr>"
            }
        }
        body += "</tbody></table>\n"
        return Markup.page(title: "Channels", user: user, body: body)
    }
}
