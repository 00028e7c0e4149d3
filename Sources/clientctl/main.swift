import ClientctlCommands

await ClientctlMain.run()
