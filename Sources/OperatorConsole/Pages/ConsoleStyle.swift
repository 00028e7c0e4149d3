/// `/console.css`: the fleet page's style and the console's own. Served from the console
/// itself: the policy (`style-src 'self'`) allows no other.
enum ConsoleStyle {
    static let css: String = FleetSection.style + "\n" + own

    private static let own = """
        nav{display:flex;gap:16px;align-items:center;padding:8px 0;border-bottom:1px solid #e5e7eb;margin-bottom:16px}
        nav .who{margin-left:auto;color:#4b5563}
        form.inline{display:inline;margin:0}form.act{display:inline-flex;gap:6px;align-items:center;margin:0 8px 0 0}
        form.act input[type=number]{width:5em}
        button{font:inherit;padding:4px 10px;border:1px solid #9ca3af;border-radius:4px;background:#f9fafb;cursor:pointer}
        button[data-act=halt],button[data-act=reject]{border-color:#b91c1c;color:#b91c1c}
        button[data-act=admit],button[data-act=lift]{border-color:#047857;color:#047857}
        .notice{padding:8px 12px;background:#ecfdf5;border:1px solid #a7f3d0;border-radius:4px}
        .problem{padding:8px 12px;background:#fef2f2;border:1px solid #fecaca;border-radius:4px}
        .state{font-size:15px}.halted{color:#b91c1c;font-weight:600}.mono{font-family:ui-monospace,monospace;font-size:12px}
        .login{max-width:320px}.login label{display:block;margin:8px 0 2px}.login input{width:100%;font:inherit;padding:4px}
        .login button{margin-top:12px}.pager a{margin-right:12px}
        .message{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px}
        """
}
