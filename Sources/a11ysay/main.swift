print("a11ysay")
