print("netinspect")
