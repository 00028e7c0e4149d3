import ClientctlShellApp

ShellMain.run()
