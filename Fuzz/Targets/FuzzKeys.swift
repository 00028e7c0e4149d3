/// The public half of `Keys/test-signing.pem` (a test-only key): the manifest targets
/// verify every input against it, so seeds signed with that key reach the field rules.
enum FuzzKeys {
    static let publicPEM = """
        -----BEGIN PUBLIC KEY-----
        MCowBQYDK2VwAyEAL/SFq2ZjDB/ytxNiZAXUI4WhCAsOdpwKFn2587i1OuQ=
        -----END PUBLIC KEY-----

        """
}
