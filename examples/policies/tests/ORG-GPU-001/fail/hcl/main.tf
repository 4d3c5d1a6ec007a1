provider "aws" {
  region                      = "us-east-1"
  access_key                  = "AKIAFAKEFAKEFAKEFAKE"
  secret_key                  = "fakefakefakefakefakefakefakefakefakefake"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  skip_region_validation      = true
}

resource "aws_instance" "trainer" {
  ami           = "ami-0c55b159cbfafe1f0"
  instance_type = "p3.8xlarge"

  tags = {
    Name       = "trainer"
    CostCenter = "ml-research"
    Owner      = "team-ml@example.com"
  }
}
