
Á

echo.protonetinspect.test"7
EchoRequest
text (	Rtext
count (Rcount"8
EchoResponse
text (	Rtext
index (Rindex2¦
EchoB
Get.netinspect.test.EchoRequest.netinspect.test.EchoResponseH
Collect.netinspect.test.EchoRequest.netinspect.test.EchoResponse(G
Expand.netinspect.test.EchoRequest.netinspect.test.EchoResponse0G
Chat.netinspect.test.EchoRequest.netinspect.test.EchoResponse(0bproto3