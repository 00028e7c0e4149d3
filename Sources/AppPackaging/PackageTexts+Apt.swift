import Foundation

/// The package's own apt source (`package --apt-repo`; docs/packaging.md#updates-through-apt):
/// its keyring, its sources file and what it holds.
extension PackageTexts {
    /// `/usr/share/keyrings/PKG-archive-keyring.gpg`: the apt repository's key, binary, read
    /// by apt for this package's source only (`Signed-By:`).
    var keyringPath: String { "/usr/share/keyrings/\(pkg)-archive-keyring.gpg" }
    /// `/etc/apt/sources.list.d/PKG.sources`: a conffile.
    var sourcesPath: String { "/etc/apt/sources.list.d/\(pkg).sources" }

    /// The package's apt source (deb822, sources.list(5)): its repository and suite, trusted
    /// with its own keyring only, never a key apt trusts for every source.
    func aptSources(_ source: AptSource) -> String {
        """
        # \(request.name) (\(request.app)): updates of the app through apt, from the \(source.suite)
        # suite, signed by the key in \(keyringPath) (clientctl package).
        Types: deb
        URIs: \(source.url)
        Suites: \(source.suite)
        Components: main
        Signed-By: \(keyringPath)

        """
    }
}
