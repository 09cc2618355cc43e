print("a11yd")
