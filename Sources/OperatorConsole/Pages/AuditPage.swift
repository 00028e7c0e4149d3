import AuditTrail
import StrictJSON

/// `/audit?page=N`: the audit trail, newest first, a page at a time.
enum AuditPage {
    /// The page of `newestFirst` (page `page` of a trail of `total` entries).
    static func render(_ newestFirst: [AuditEntry], total: Int, page: Int, pageSize: Int, user: SignedIn) -> String {
        let pages = max(1, (total + pageSize - 1) / pageSize)
        var body = "<p class=\"totals\"><span data-field=\"entries\">\(total)</span> entries, signed and hash-chained "
        body += "(check them with <span class=\"mono\">clientctl audit verify</span>). Page \(page) of \(pages).</p>"
        body += "<table id=\"audit\"><thead><tr><th class=\"num\">#</th><th>Time</th><th>Operator</th><th>Address</th><th>Act</th>"
        body += "<th>Target</th><th>Before</th><th>After</th><th>Result</th></tr></thead><tbody>"
        for entry in newestFirst {
            let r = entry.record
            body += "<tr data-seq=\"\(entry.seq)\"><td class=\"num\">\(entry.seq)</td><td>\(Markup.escape(RFC3339.format(r.time)))</td>"
            for (field, text) in [
                ("operator", r.operatorName), ("address", r.address), ("act", r.act), ("target", r.target), ("before", r.before),
                ("after", r.after), ("result", r.result),
            ] {
                body += "<td data-field=\"\(field)\">\(Markup.escape(text))</td>"
            }
            body += "</tr>"
        }
        body += "</tbody></table><p class=\"pager\">"
        if page > 1 { body += "<a href=\"/audit?page=\(page - 1)\" rel=\"prev\">Newer</a>" }
        if page < pages { body += "<a href=\"/audit?page=\(page + 1)\" rel=\"next\">Older</a>" }
        body += "</p>\n"
        return Markup.page(title: "Audit trail", user: user, body: body)
    }
}
