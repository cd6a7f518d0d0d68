import CourierCLI
import Foundation

// Everything lives in CourierCLI, where the tests can reach it; this file only hands over the arguments.
let status = await CourierCommandLine.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
